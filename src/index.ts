// The public API: what `import … from 'imgc'` gives a definition.
export {
  image,
  script,
  webhook,
  event,
  DefinitionError,
  ImageBuilder,
  StepBuilder,
  type PhaseBuilder,
  type Declared,
  type Removed,
  type Without,
  type WithoutTree,
  ArtifactBuilder,
  VerifyBuilder,
  HookBuilder,
  type BaseImage,
  type AnsibleRoleOptions,
  type CommandOptions,
  type DiskOptions,
  type DeclaredFacts,
  type HookOptions,
  type Ownership,
  type PhaseOptions,
  type UserOptions,
} from './dsl/builder.js';
export { defineModule, type Added, type Module } from './dsl/module.js';
export { fromContract, fromDefinition, type FromContractOptions } from './contract/import.js';
export { variable, Variable, ListVariable, type VariableOptions, type VariableType } from './dsl/variables.js';
/** zod, for variable schemas: `variable('k8s_minor', z.string().regex(/^\d+\.\d+$/))`. */
export { z } from './util/zod.js';
export type { Facts, FactsOf, Listed, NoFacts, PackageCatalog, PackageNameOf, PackageFacts, Ref, WithPackages } from './dsl/types.js';
export * from '../stdlib/index.js';
export { debian12 as debian } from '../stdlib/bases.js';
export type { Image, Phase, Step, Fact, FactKind, SourceLocation, HookAction } from './ir/types.js';
export { lifecycle, lifecycleMermaid, nodeStates, type LifecycleEdge, type NodeState } from './ir/lifecycle.js';
