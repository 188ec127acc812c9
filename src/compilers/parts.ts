// A phase's root steps cut into parts at the steps that run apart from its
// script: a reboot Packer carries out between two provisioners, an Ansible
// role the shell target's build.sh applies from the build machine. Each run of
// steps between them becomes a script of its own, compiled as the phase with
// those steps only; the frame runs the other steps in between.

/** A run of steps for one script, or a step the frame runs itself between two runs. */
export type Piece<S> = { readonly part: S[] } | { readonly own: S };

/** `steps` in order, cut at each step `own` holds for (no empty part). */
export const cut = <S>(steps: readonly S[], own: (s: S) => boolean): Piece<S>[] => {
  const out: Piece<S>[] = [];
  let part: S[] = [];
  for (const s of steps) {
    if (!own(s)) {
      part.push(s);
      continue;
    }
    if (part.length) out.push({ part });
    out.push({ own: s });
    part = [];
  }
  if (part.length) out.push({ part });
  return out;
};
