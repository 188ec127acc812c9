// What the commands exit with; kept apart so that a command can fail before
// anything heavy is loaded.

export const EXIT = { ok: 0, contract: 1, usage: 2 } as const;

/** A mistake in how imgc was called (arguments, imgc.toml): exit 2 with its message. */
export class UsageError extends Error {}
