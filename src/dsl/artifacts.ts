// Phase 3's builder: the artifacts made from the finished root, and Packer's
// sources (a cloud image, a VM, an existing host).
import type { Facts, NoFacts, PackageCatalog } from './types.js';
import { StepChain, type Link } from './builder.js';
import { kinds } from '../steps/index.js';
import type { ArtifactOptions } from '../steps/artifact.js';
import type { CloudImageSetting } from '../steps/cloud-image.js';

/** Produces files from the finished root (phase 3). */
export class ArtifactBuilder<F extends Facts = NoFacts, C extends PackageCatalog = PackageCatalog> extends StepChain<F, C> {
  protected derive(last: Link | undefined, hooks: Link | undefined): this {
    return new ArtifactBuilder(this.base, last, hooks, this.family) as this;
  }

  /** The root as a plain directory. */
  dir(output = 'rootfs'): this {
    return this.add(kinds.artifact.make(this.context, 'dir', output));
  }

  /** The root as a tarball; its compression follows the name (.tar.zst, .tar.gz, .tar) unless given. */
  tar(output = 'rootfs.tar.zst', opts: Pick<ArtifactOptions, 'compression'> = {}): this {
    return this.add(kinds.artifact.make(this.context, 'tar', output, opts));
  }

  /** The root as a bare ext4 filesystem image (no partition table, not bootable). */
  ext4(output = 'rootfs.ext4', opts: Pick<ArtifactOptions, 'size'> = {}): this {
    return this.add(kinds.artifact.make(this.context, 'ext4', output, opts));
  }

  /**
   * A raw disk image. `bootable: true`: a GPT disk with an EFI system partition
   * (systemd-boot, UEFI only) and the root partition; it needs the root's
   * kernel and systemd-boot (`use(bootable())`). Otherwise a bare ext4 filesystem, as `ext4()`.
   */
  raw(output = 'disk.raw', opts: DiskOptions = {}): this {
    return this.add(kinds.artifact.make(this.context, 'raw', output, opts));
  }

  /** A qcow2 disk image; `bootable` as for `raw()`. */
  qcow2(output = 'disk.qcow2', opts: DiskOptions = {}): this {
    return this.add(kinds.artifact.make(this.context, 'qcow2', output, opts));
  }

  /**
   * A Packer source: a cloud image, a VM, or an existing host (`null`).
   * `opts.disk` (qemu): the VM boots the bootable raw/qcow2 artifact of that
   * output, the disk `imgc build` made, instead of a downloaded cloud image.
   */
  cloudImage(builder: 'qemu' | 'amazon-ebs' | 'null', name: string, settings: Record<string, CloudImageSetting> = {}, opts: { disk?: string } = {}): this {
    return this.add(kinds.cloudImage.make(builder, name, settings, opts));
  }
}

export type DiskOptions = Pick<ArtifactOptions, 'size' | 'bootable'>;
