// The public API: what `import … from 'imgc'` gives a definition.
export {
  image,
  script,
  webhook,
  event,
  DefinitionError,
  ImageBuilder,
  PhaseBuilder,
  ArtifactBuilder,
  VerifyBuilder,
  type BaseImage,
  type CommandOptions,
  type DeclaredFacts,
  type HookOptions,
  type Ownership,
  type PhaseOptions,
  type UserFacts,
  type UserOptions,
  type WithDeclared,
} from './dsl/builder.js';
export { defineModule, type Added, type Module } from './dsl/module.js';
export type { Facts, FactsOf, NoFacts, PackageCatalog, PackageFacts, Ref, With, WithPackages } from './dsl/types.js';
export * from '../stdlib/index.js';
export { debian12 as debian } from '../stdlib/bases.js';
export type { Image, Phase, Step, Fact, FactKind, SourceLocation, HookAction } from './ir/schema.js';
