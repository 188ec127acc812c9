// How a base that is not a fresh root of a distro is named to a user: the
// contract file or the other definition, with the image and phase its facts
// are of (`imgc explain`, and the checker's diagnostics about a fact such a
// base lacks).
import type { Image } from './schema.js';

export type BaseOrigin = NonNullable<Image['base']['origin']>;

/** "the contract golden.contract.json (image k8s-node after phase customize)"; `exact` adds the contract's version and digest. */
export const originText = (o: BaseOrigin, exact = false): string =>
  `${o.kind === 'contract' ? `the contract ${o.file}` : `the definition ${o.file}`} (image ${o.image} after phase ${o.phase}${
    exact && o.version !== undefined ? `, contract v${o.version}` : ''
  }${exact && o.digest ? `, digest ${o.digest}` : ''})`;
