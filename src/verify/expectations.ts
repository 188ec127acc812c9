// What a definition promises about its built root, step by step: every fact
// the base and the steps provide, checked more closely where the step says
// more (a file's exact content and mode, a user's shell and groups, a sysctl's
// value in its file). A later step about the same thing replaces an earlier
// one; a fact a later step removes is no longer promised.
import { describeFact } from '../core/facts.js';
import { runsUnder, valuesOf } from '../core/conditions.js';
import type { Fact, Image, SourceLocation, Step } from '../ir/schema.js';
import { imageView, phaseKind } from '../ir/phases.js';
import { removedWith } from '../ir/flow.js';
import { kindOf } from '../steps/index.js';
import {
  findCommand,
  isInstalled,
  moduleAnywhere,
  readDpkgStatus,
  readGroups,
  readPasswd,
  sysctlAnywhere,
  unitFile,
  type GroupEntry,
  type PasswdEntry,
} from '../core/root.js';
import { readRepo } from '../core/apt.js';
import type { RootView } from './rootview.js';

/** The root's databases, read once per verification. */
export class RootFacts {
  private _passwd?: Map<string, PasswdEntry>;
  private _groups?: Map<string, GroupEntry>;
  private _dpkg?: Map<string, string>;
  constructor(readonly view: RootView) {}
  get passwd() {
    return (this._passwd ??= readPasswd(this.view));
  }
  get groups() {
    return (this._groups ??= readGroups(this.view));
  }
  get dpkg() {
    return (this._dpkg ??= readDpkgStatus(this.view));
  }
}

/** Why the expectation does not hold, or undefined when it does. */
export type Check = (r: RootFacts) => string | undefined;

export interface Expectation {
  /** What it is about; a later expectation with the same subject replaces this one. */
  subject: string;
  /** Human wording: "user 'ops'", "file /etc/x". */
  what: string;
  stepId: string;
  loc?: SourceLocation;
  check: Check;
}

const unitSuffix = /\.[a-z]+$/;

/** The plain check of one fact, whichever step provides it. */
export const factCheck = (f: Fact): Check | undefined => {
  switch (f.kind) {
    case 'user':
      return (r) => (r.passwd.has(f.key) ? undefined : `no line for '${f.key}' in /etc/passwd`);
    case 'group':
      return (r) => (r.groups.has(f.key) ? undefined : `no line for '${f.key}' in /etc/group`);
    case 'path':
      return (r) => (r.view.lstat(f.key) ? undefined : `${f.key} does not exist`);
    case 'package':
      return (r) => {
        const s = r.dpkg.get(f.key);
        return isInstalled(s) ? undefined : `not installed according to /var/lib/dpkg/status${s ? ` (status: ${s})` : ''}`;
      };
    case 'service':
      return (r) => (unitFile(r.view, f.key) ? undefined : `no unit file for ${unitSuffix.test(f.key) ? f.key : `${f.key}.service`} in the systemd unit directories`);
    case 'kernelModule':
      return (r) => (moduleAnywhere(r.view, f.key) ? undefined : `not listed in /etc/modules or any modules-load.d/*.conf`);
    case 'sysctl':
      return (r) => (sysctlAnywhere(r.view, f.key) ? undefined : `not set in /etc/sysctl.conf or any sysctl.d/*.conf`);
    case 'command':
      return (r) => (findCommand(r.view, f.key) ? undefined : `no executable '${f.key}' in ${'/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'}`);
    case 'repo':
      return (r) => (readRepo(r.view, f.key) ? undefined : `no /etc/apt/sources.list.d/${f.key}.sources (or .list)`);
    case 'artifact':
      return undefined; // artifacts are files beside the root, checked by the build that makes them
  }
};

const factSubject = (f: Fact) => `fact:${f.kind}:${f.key}`;

/** Closer expectations a step makes beyond its facts, keyed like the facts they refine. */
const stepExpectations = (s: Step): Array<Omit<Expectation, 'stepId' | 'loc'>> => kindOf(s).verify.root?.(s) ?? [];

/** Every expectation of the definition about its final root, in step order. */
export const expectationsOf = (ir: Image): Expectation[] => {
  const bySubject = new Map<string, Expectation>();
  const put = (e: Expectation) => {
    bySubject.delete(e.subject); // re-insert: the order is that of the last step that promised it
    bySubject.set(e.subject, e);
  };
  const baseLoc = ir.base.loc;
  for (const f of ir.base.provides) {
    const check = factCheck(f);
    if (check) put({ subject: factSubject(f), what: describeFact(f), stepId: 'base', ...(baseLoc ? { loc: baseLoc } : {}), check });
  }
  const values = valuesOf(ir.variables);
  // The image's root: what the phases for existing hosts only (bootstrap) do is not in it.
  for (const phase of imageView(ir).phases) {
    if (phaseKind(phase) === 'artifact') continue;
    for (const s of [...phase.pre, ...phase.steps, ...phase.post]) {
      if (!runsUnder(s.conditions, values)) continue; // a step the variables' values do not take
      const at = { stepId: s.id, ...(s.loc ? { loc: s.loc } : {}) };
      // A removed path takes what lies below it, and a glob every known path it names, as the checker's walk has it.
      const known = [...bySubject.keys()].filter((k) => k.startsWith('fact:')).map((k) => k.slice(5));
      for (const f of s.removes) for (const id of removedWith(s, f, known)) bySubject.delete(`fact:${id}`);
      const own = stepExpectations(s).map((e) => ({ ...e, ...at }));
      const covered = new Set(own.map((e) => e.subject));
      for (const f of s.provides) {
        if (covered.has(factSubject(f))) continue;
        const check = factCheck(f);
        if (check) put({ subject: factSubject(f), what: describeFact(f), ...at, check });
      }
      for (const e of own) put(e);
    }
  }
  return [...bySubject.values()];
};
