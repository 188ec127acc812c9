// The public API: what `import … from 'imgc'` gives a definition.
export { image, ImageBuilder, type BaseImage, type PhaseOptions } from './dsl/image.js';
export { variants, Matrix, type Axes, type Combination, type Exclusion, type MatrixImage, type Variant, type VariantsOptions } from './dsl/variants.js';
export { DefinitionError } from './core/definition-error.js';
export { arches, type Arch } from './core/arch.js';
export type { DeclaredFacts } from './steps/shared.js';
export {
  script,
  webhook,
  event,
  type HookOptions,
  type CommandOptions,
  type AnsibleRoleOptions,
  type PuppetApplyOptions,
  type StepBuilder,
  type PhaseBuilder,
  VerifyBuilder,
  HookBuilder,
} from './dsl/builder.js';
export { ArtifactBuilder, type DiskOptions } from './dsl/artifacts.js';
export { defineModule } from './dsl/module.js';
export { fromContract, fromDefinition, type FromContractOptions } from './contract/import.js';
export { variable, Variable, ListVariable, type VariableOptions, type VariableType } from './dsl/variables.js';
/** zod, for variable schemas: `variable('k8s_minor', z.string().regex(/^\d+\.\d+$/))`. */
export { z } from './util/zod.js';
export type { Added, Declared, Facts, Ownership, UserOptions, FactsOf, Listed, Module, NoFacts, PackageCatalog, PackageNameOf, PackageFacts, Ref, Removed, Without, WithoutTree, WithPackages } from './dsl/types.js';
export * from '../stdlib/index.js';
export { debian12 as debian } from '../stdlib/bases.js';
export type { Image, Phase, Step, Fact, FactKind, SourceLocation, HookAction } from './ir/types.js';
export { lifecycle, lifecycleMermaid, nodeStates, type LifecycleEdge, type NodeState } from './ir/lifecycle.js';
