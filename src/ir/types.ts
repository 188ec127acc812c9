// Generated from src/ir/schema.ts and the step registry (src/steps/index.ts) by `npm run gen` (scripts/gen.mjs): do not edit.
// The Image IR's types written out, so type-checking a definition does not go through zod's inference.
export type FactKind = "user" | "group" | "path" | "package" | "service" | "kernelModule" | "sysctl" | "command" | "repo" | "artifact";
export type Fact = {
    kind: FactKind;
    key: string;
};
export type SourceLocation = {
    file: string;
    line: number;
    column: number;
};
export type UserStep = {
    kind: "user";
    name: string;
    groups: string[];
    system: boolean;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    uid?: number | undefined;
    primaryGroup?: string | undefined;
    home?: string | undefined;
    shell?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type GroupStep = {
    kind: "group";
    name: string;
    system: boolean;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    gid?: number | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type DirectoryStep = {
    kind: "directory";
    path: string;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    owner?: string | undefined;
    group?: string | undefined;
    mode?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type FileStep = {
    kind: "file";
    path: string;
    content: string;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    owner?: string | undefined;
    group?: string | undefined;
    mode?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type SymlinkStep = {
    kind: "symlink";
    path: string;
    target: string;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type PackagesStep = {
    kind: "packages";
    action: "install" | "remove";
    names: string[];
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    unknown?: {
        name: string;
        didYouMean?: string | undefined;
    }[] | undefined;
    archive?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type AptRepositoryStep = {
    kind: "aptRepository";
    name: string;
    uri: string;
    suites: string[];
    components: string[];
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    key?: string | undefined;
    keyUrl?: string | undefined;
    keyPath?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type ServiceStep = {
    kind: "service";
    name: string;
    enabled: boolean;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    package?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type SysctlStep = {
    kind: "sysctl";
    key: string;
    value: string;
    file: string;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type KernelModuleStep = {
    kind: "kernelModule";
    name: string;
    file: string;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type SwapOffStep = {
    kind: "swapOff";
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type CommandStep = {
    kind: "command";
    run: string;
    needsMounts: boolean;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    creates?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type CleanStep = {
    kind: "clean";
    action: "remove" | "truncate";
    paths: string[];
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type MaskStep = {
    kind: "mask";
    name: string;
    masked: boolean;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type HoldStep = {
    kind: "hold";
    names: string[];
    held: boolean;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type ArtifactStep = {
    kind: "artifact";
    format: "dir" | "tar" | "ext4" | "raw" | "qcow2";
    output: string;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    compression?: "none" | "gzip" | "zstd" | undefined;
    size?: string | undefined;
    bootable?: boolean | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type CloudImageStep = {
    kind: "cloudImage";
    builder: "null" | "qemu" | "amazon-ebs";
    name: string;
    settings: Record<string, string | number | boolean | string[] | string[][]>;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    disk?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type VerifyStep = {
    kind: "verify";
    check: "facts" | "checksums" | "manifest" | "boot";
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    disk?: string | undefined;
    timeoutSeconds?: number | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type ScriptHook = {
    type: "script";
    run: string;
};
export type WebhookHook = {
    type: "webhook";
    url: string;
    timeoutSeconds: number;
    retries: number;
    onFailure: "fail" | "warn";
};
export type EventHook = {
    type: "event";
    target: string;
};
export type HookAction = ScriptHook | WebhookHook | EventHook;
export type HookStep = {
    kind: "hook";
    when: "pre" | "post";
    action: HookAction;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type DownloadStep = {
    kind: "download";
    url: string;
    sha256: string;
    path: string;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    owner?: string | undefined;
    group?: string | undefined;
    mode?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type ArchiveStep = {
    kind: "archive";
    url: string;
    sha256: string;
    format: "tar.gz" | "tar.xz" | "tar.zst" | "zip";
    dest: string;
    strip: number;
    creates: string[];
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    owner?: string | undefined;
    group?: string | undefined;
    mode?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type UnitStep = {
    kind: "unit";
    unit: string;
    content: string;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    dropIn?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type RestartStep = {
    kind: "restart";
    name: string;
    action: "restart" | "start" | "stop";
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type LineInFileStep = {
    kind: "lineInFile";
    path: string;
    state: "absent" | "present";
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    line?: string | undefined;
    regexp?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type BlockInFileStep = {
    kind: "blockInFile";
    path: string;
    block: string;
    marker: string;
    state: "absent" | "present";
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type IniKeyStep = {
    kind: "iniKey";
    path: string;
    key: string;
    state: "absent" | "present";
    spaces: boolean;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    section?: string | undefined;
    value?: string | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type DataKeyStep = {
    kind: "dataKey";
    format: "toml" | "yaml";
    path: string;
    key: string[];
    state: "absent" | "present";
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    value?: string | number | boolean | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type UpgradeStep = {
    kind: "upgrade";
    dist: boolean;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type AnsibleRoleStep = {
    kind: "ansibleRole";
    name: string;
    source: string;
    files: {
        path: string;
        text: string;
    }[];
    vars: Record<string, string | number | boolean>;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type RebootStep = {
    kind: "reboot";
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    reason?: string | undefined;
    timeout?: number | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type PuppetApplyStep = {
    kind: "puppetApply";
    source: string;
    manifest: {
        name: string;
        text: string;
    };
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    modules?: {
        source: string;
        files: {
            path: string;
            text: string;
        }[];
    } | undefined;
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type PackageListStep = {
    kind: "packageList";
    list: string;
    id: string;
    provides: Fact[];
    requires: Fact[];
    removes: Fact[];
    loc?: SourceLocation | undefined;
    description?: string | undefined;
    conditions?: {
        variable: string;
        equals: string | number | boolean;
        negate: boolean;
    }[] | undefined;
};
export type PhaseStep = UserStep | GroupStep | DirectoryStep | FileStep | SymlinkStep | PackagesStep | AptRepositoryStep | ServiceStep | SysctlStep | KernelModuleStep | SwapOffStep | CommandStep | CleanStep | MaskStep | HoldStep | ArtifactStep | CloudImageStep | VerifyStep | DownloadStep | ArchiveStep | UnitStep | RestartStep | LineInFileStep | BlockInFileStep | IniKeyStep | DataKeyStep | UpgradeStep | AnsibleRoleStep | RebootStep | PuppetApplyStep | PackageListStep;
export type Step = UserStep | GroupStep | DirectoryStep | FileStep | SymlinkStep | PackagesStep | AptRepositoryStep | ServiceStep | SysctlStep | KernelModuleStep | SwapOffStep | CommandStep | CleanStep | MaskStep | HoldStep | ArtifactStep | CloudImageStep | VerifyStep | HookStep | DownloadStep | ArchiveStep | UnitStep | RestartStep | LineInFileStep | BlockInFileStep | IniKeyStep | DataKeyStep | UpgradeStep | AnsibleRoleStep | RebootStep | PuppetApplyStep | PackageListStep;
export type StepKind = Step['kind'];
export type StepOf<K extends StepKind> = Extract<Step, {
    kind: K;
}>;
export type Phase = {
    name: string;
    runtime: boolean;
    pre: HookStep[];
    steps: (PhaseStep)[];
    post: HookStep[];
    runtimeOnly?: true | undefined;
    loc?: SourceLocation | undefined;
};
export type Hook = Phase['pre'][number];
export type Base = {
    name: string;
    distro: "debian" | "ubuntu";
    release: string;
    suite: string;
    variant: "default" | "minbase" | "buildd";
    packageManager: "apt" | "dnf";
    include: string[];
    provides: Fact[];
    arch?: "amd64" | "arm64" | undefined;
    details?: Record<string, {
        type?: "file" | "symlink" | "dir" | "other" | undefined;
        owner?: string | undefined;
        group?: string | undefined;
        mode?: string | undefined;
        version?: string | undefined;
        enabled?: boolean | undefined;
    }> | undefined;
    origin?: {
        kind: "contract" | "definition";
        file: string;
        image: string;
        phase: string;
        version?: number | undefined;
        digest?: string | undefined;
    } | undefined;
    loc?: SourceLocation | undefined;
};
export type Variable = {
    name: string;
    type: "string" | "number" | "boolean" | "list";
    sensitive: boolean;
    description?: string | undefined;
    value?: string | number | boolean | string[] | undefined;
    oneOf?: string[] | undefined;
};
export type Fleet = {
    serial?: string | undefined;
    maxFailPercentage?: number | undefined;
};
export type Image = {
    irVersion: 1;
    name: string;
    source: string;
    base: Base;
    phases: Phase[];
    variables?: Variable[] | undefined;
    fleet?: Fleet | undefined;
};
