/**
 * Every backend's `--target` name. Apart from the backends (src/compilers/index.ts
 * maps each to its compiler), so that naming the targets — in usage text, in
 * imgc.toml's schema — loads none of them.
 */
export const targets = ['shell', 'ansible', 'packer', 'cloud-init'] as const;
export type Target = (typeof targets)[number];

/** The Packer releases the packer target writes for: 1.10 and later pin their plugins, 1.6 (Debian 12's) has them built in. */
export const packerVersions = ['1.10', '1.6'] as const;
export type PackerVersion = (typeof packerVersions)[number];

export const isTarget = (name: string): name is Target => (targets as readonly string[]).includes(name);
