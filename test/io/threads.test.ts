/**
 * The I/O threads' watchdog (src/io/threads.ts) against a read really hung in the kernel: a
 * thread blocked opening a FIFO that nobody writes. The job is abandoned with an IoError that
 * names it, other jobs run meanwhile, too many hung threads refuse new jobs by name, and once
 * the FIFO gets a writer the thread ends and jobs run again.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IoError } from "../../src/files/errors.ts";
import type { Job } from "../../src/io/jobs.ts";
import { createFileThreads } from "../../src/io/threads.ts";
import { pollUntil } from "../support/poll.ts";

const GATED_WORKER = new URL("../support/gated-io-worker.ts", import.meta.url).href;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "io-threads-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A FIFO at a new path. */
function fifo(name: string): string {
  const path = join(dir, name);
  expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0);
  return path;
}

describe("I/O threads", () => {
  test("a job blocked in the kernel is abandoned by name; others run meanwhile; too many hung refuse new jobs; the thread ends once unblocked", async () => {
    const hungFifo = fifo("hung.fifo");
    const threads = createFileThreads({ workerUrl: GATED_WORKER, maxHung: 1 });
    const other = createFileThreads({ workerUrl: GATED_WORKER });
    try {
      writeFileSync(join(dir, "manifest.json"), "{}");
      // the thread is up before the job that blocks (on a loaded machine a thread's start can outlast the limit)
      await threads.run({ kind: "read", location: dir, key: "manifest.json" }, { timeoutMs: 30_000, label: "warming up" });
      const blocked = threads.run({ kind: "block", path: hungFifo } as unknown as Job, { timeoutMs: 200, label: `reading ${hungFifo}` });
      // another job, on another thread, is answered while the first one hangs
      expect(new TextDecoder().decode((await other.run({ kind: "read", location: dir, key: "manifest.json" }, { timeoutMs: 30_000, label: "reading" })) as Uint8Array)).toBe("{}");
      const error = await blocked.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(IoError);
      expect((error as IoError).reason).toBe("timeout");
      expect((error as IoError).message).toBe(`reading ${hungFifo}: no progress for 200 ms; the operation is abandoned (timed out)`);
      expect(threads.hung().map((h) => h.label)).toEqual([`reading ${hungFifo}`]);

      // one hung thread is the limit here: the next job is refused at once, naming the hung one
      const refused = await threads.run({ kind: "read", location: dir, key: "manifest.json" }, { timeoutMs: 30_000, label: "reading the manifest" }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(IoError);
      expect((refused as IoError).reason).toBe("hung");
      expect((refused as IoError).message).toMatch(new RegExp(`^reading the manifest: not started: 1 earlier file operations have not returned \\(the oldest, reading ${hungFifo}, for \\d+ s\\)$`));

      // the fault goes: a writer opens the FIFO (read-write: Linux never blocks that open, and it
      // counts as a writer whether the thread's open came already or is still to come), the
      // blocked open returns, the thread ends
      const writer = openSync(hungFifo, constants.O_RDWR);
      // a hung thread's end is a message inside the threads, with no event outside them
      await pollUntil(() => threads.hung().length === 0);
      closeSync(writer);
      expect(new TextDecoder().decode((await threads.run({ kind: "read", location: dir, key: "manifest.json" }, { timeoutMs: 30_000, label: "reading" })) as Uint8Array)).toBe("{}");
    } finally {
      threads.close();
      other.close();
    }
  }, 30_000);

  test("errors cross the thread with their kind: a FIFO read through the storage is an IoError not_a_file naming it", async () => {
    const threads = createFileThreads();
    try {
      const source = join(dir, "fifo-source");
      Bun.spawnSync(["mkdir", "-p", source]);
      fifo("fifo-source/manifest.json");
      const error = await threads.run({ kind: "read", location: source, key: "manifest.json" }, { timeoutMs: 30_000, label: "reading" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IoError);
      expect(error).toMatchObject({ reason: "not_a_file", message: `${join(source, "manifest.json")} is a FIFO (named pipe), not a regular file` });
    } finally {
      threads.close();
    }
  });
});
