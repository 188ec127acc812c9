// A file of its own: the builder, variables, a kind's `make` and contract
// import all throw it, and none of them should import another for it.

/** A mistake in the definition found while it runs (not a contract error). */
export class DefinitionError extends Error {
  override name = 'DefinitionError';
}
