// The SBOM of a built root: every package dpkg's status lists as installed,
// with its version and architecture, as an SPDX 2.3 JSON document
// (`sbom.spdx.json` beside manifest.json). Package URLs follow purl's deb type.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface InstalledPackage {
  name: string;
  version: string;
  architecture: string;
  source?: string;
}

/** Installed packages from a dpkg status file's text, sorted by name and architecture. */
export const installedPackages = (status: string): InstalledPackage[] => {
  const out: InstalledPackage[] = [];
  for (const para of status.split(/\n\s*\n/)) {
    const field = (name: string) => new RegExp(`^${name}: *(.*)$`, 'mi').exec(para)?.[1]?.trim();
    const name = field('Package');
    const st = field('Status');
    const version = field('Version');
    if (!name || !version || !st || !/ installed$/.test(st)) continue;
    const source = field('Source');
    out.push({ name, version, architecture: field('Architecture') ?? 'all', ...(source ? { source: source.split(' ')[0]! } : {}) });
  }
  return out.sort((a, b) => (a.name === b.name ? (a.architecture < b.architecture ? -1 : 1) : a.name < b.name ? -1 : 1));
};

/** purl's encoding of a version or name (":" of an epoch, "+", "~"). */
const purlPart = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export interface SbomInput {
  image: string;
  /** The distribution the packages come from ("debian", "ubuntu"), for purls. */
  distro: string;
  /** ISO time of creation (SOURCE_DATE_EPOCH when set). */
  created: string;
  /** Makes the document's namespace unique to this root (e.g. the definition's hash). */
  id: string;
  root: string;
}

/** The SPDX 2.3 document of the root's installed packages. */
export const spdxOfRoot = (o: SbomInput): object => {
  let status = '';
  try {
    status = readFileSync(path.join(o.root, 'var/lib/dpkg/status'), 'utf8');
  } catch {
    /* no dpkg: an empty SBOM says so */
  }
  const pkgs = installedPackages(status);
  const ids = new Set<string>();
  const spdxId = (p: InstalledPackage) => {
    const base = `SPDXRef-Package-deb-${`${p.name}-${p.architecture}`.replace(/[^A-Za-z0-9.-]/g, '-')}`;
    let id = base;
    for (let i = 2; ids.has(id); i++) id = `${base}-${i}`;
    ids.add(id);
    return id;
  };
  const packages = pkgs.map((p) => ({
    name: p.name,
    SPDXID: spdxId(p),
    versionInfo: p.version,
    downloadLocation: 'NOASSERTION',
    filesAnalyzed: false,
    licenseConcluded: 'NOASSERTION',
    licenseDeclared: 'NOASSERTION',
    copyrightText: 'NOASSERTION',
    ...(p.source ? { sourceInfo: `built from source package ${p.source}` } : {}),
    externalRefs: [
      {
        referenceCategory: 'PACKAGE-MANAGER',
        referenceType: 'purl',
        referenceLocator: `pkg:deb/${o.distro}/${purlPart(p.name)}@${purlPart(p.version)}?arch=${purlPart(p.architecture)}`,
      },
    ],
  }));
  return {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: `${o.image} root filesystem`,
    documentNamespace: `https://spdx.org/spdxdocs/imgc/${o.image}-${o.id}`,
    creationInfo: { created: o.created, creators: ['Tool: imgc'] },
    packages,
    relationships: packages.map((p) => ({ spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: p.SPDXID })),
  };
};
