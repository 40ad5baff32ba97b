/**
 * Test helper: a real small file system that fills up — a tmpfs mounted on a temporary
 * directory (`mount -t tmpfs -o size=…`, which needs root). Where it cannot be mounted the
 * caller skips its disk tests, and the reason is printed: never a silent skip.
 */
import { mkdirSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A mounted tmpfs, and how to fill it. */
export interface Tmpfs {
  dir: string;
  /** Free bytes now. */
  free: () => number;
  /** Writes `name` so that `leave` bytes stay free (or as close as a page allows). */
  fillLeaving: (name: string, leave: number) => string;
  unmount: () => void;
}

/**
 * Mounts a tmpfs of `sizeMiB` on `dir` (created).
 * @returns the mount, or the reason it could not be mounted (for the skip message)
 */
export function mountTmpfs(dir: string, sizeMiB: number): Tmpfs | { skip: string } {
  mkdirSync(dir, { recursive: true });
  const mount = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${sizeMiB}m,mode=0755`, "tmpfs", dir], { stderr: "pipe", stdout: "pipe" });
  if (mount.exitCode !== 0) {
    return { skip: `cannot mount a ${sizeMiB} MiB tmpfs on ${dir} (${mount.stderr.toString().trim() || `mount exited ${mount.exitCode}`}); the disk-full tests need root and mount(8)` };
  }
  const free = () => {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  };
  return {
    dir,
    free,
    fillLeaving(name, leave) {
      const path = join(dir, name);
      const bytes = Math.max(0, free() - leave);
      writeFileSync(path, new Uint8Array(bytes));
      return path;
    },
    unmount() {
      Bun.spawnSync(["umount", "-l", dir]);
    },
  };
}

/** Mounts a tmpfs, or prints why the tests that need one are skipped and returns null. */
export function tmpfsOrSkip(dir: string, sizeMiB: number, what: string): Tmpfs | null {
  const mounted = mountTmpfs(dir, sizeMiB);
  if ("skip" in mounted) {
    console.warn(`SKIPPED ${what}: ${mounted.skip}`);
    return null;
  }
  return mounted;
}
