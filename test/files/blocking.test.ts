/**
 * The blocking file operations (src/files/blocking.ts) on a real 20 MiB tmpfs (skipped, with
 * the reason printed, where none can be mounted) and a real FIFO: a copy that runs out of space
 * halfway, a FIFO refused without waiting for a writer.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IoError } from "../../src/files/errors.ts";
import { copyInSlices, openRegular, readRegular } from "../../src/files/blocking.ts";
import { buildSnapshotFromGenerator } from "../../src/generate/snapshot.ts";
import { type Tmpfs, tmpfsOrSkip } from "../support/tmpfs.ts";

const dir = mkdtempSync(join(tmpdir(), "blocking-"));
const disk: Tmpfs | null = tmpfsOrSkip(join(dir, "tmpfs"), 20, "the full-disk copy test (test/files/blocking.test.ts)");
const MiB = 2 ** 20;

afterAll(() => {
  disk?.unmount();
  rmSync(dir, { recursive: true, force: true });
});

describe("blocking file operations", () => {
  test("a FIFO is refused at once, by name and kind, never opened for a read that would wait", () => {
    const fifo = join(dir, "a.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    expect(() => openRegular(fifo)).toThrow(`${fifo} is a FIFO (named pipe), not a regular file`);
    expect(() => readRegular(fifo, 1024)).toThrow(IoError);
    expect(() => openRegular(dir)).toThrow(`${dir} is a directory, not a regular file`);
    expect(readRegular(join(dir, "absent"), 1024)).toBeNull();
  });

  test.skipIf(disk === null)("a copy that runs out of space midway (no room check first) fails with the sizes and leaves no partial file", () => {
    const one = join(dir, "one.snap");
    buildSnapshotFromGenerator({ count: 20_000, seed: 1 }, one);
    (disk as Tmpfs).fillLeaving("filler", 2 * MiB);
    const file = join((disk as Tmpfs).dir, "copy");
    const source = openSync(one, "r");
    try {
      let error: unknown = null;
      try {
        copyInSlices({ fd: source, path: one }, statSync(one).size, file);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(IoError);
      expect((error as IoError).reason).toBe("no_space");
      expect((error as IoError).message).toMatch(new RegExp(`^writing ${file}: no space left on the device \\(ENOSPC\\) after [1-9]\\d*\\.\\d MiB of \\d+\\.\\d MiB \\(\\d+\\.\\d MiB free\\)$`));
      expect(existsSync(file)).toBe(false);
    } finally {
      closeSync(source);
    }
  }, 30_000);
});
