/**
 * A live location's manifest while `snapshot follow` publishes batches and a compacted snapshot
 * at once (src/publish/publish.ts): the snapshot's upload takes a while, and a batch published
 * meanwhile must stay listed, with its object, after the snapshot is named — else its changes
 * are lost for every replica (the publisher has confirmed them to PostgreSQL already), and the
 * snapshot's object must not be removed by the batch's commit before the manifest names it. The
 * snapshot's publication is held at a gate in front of the I/O threads, before its upload and
 * after it, while the batch is published.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FileThreads, createFileThreads } from "../../src/io/threads.ts";
import { type BatchEntry, batchKey, sha256Hex } from "../../src/live/batches.ts";
import { encodeBatch } from "../../src/live/changes.ts";
import { publishBatch, publishSnapshot, readManifest } from "../../src/publish/publish.ts";
import { openStorage } from "../../src/io/storage.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";

let dir: string;
let threads: FileThreads;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "users-live-manifest-"));
  threads = createFileThreads();
});
afterAll(() => {
  threads.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A snapshot of `n` users named after `tag`. */
function snapshotOf(tag: string, n: number): string {
  const path = join(dir, `${tag}.snap`);
  writeSnapshot(path, buildStoreFromRecords(Array.from({ length: n }, (_, i) => ({ id: i + 1, name: `${tag} ${i}`, email: `u${i}@x`, status: "active" }))));
  return path;
}

/** A batch from `first` to `last` renaming user 1, with its manifest entry. */
function batchOf(first: string, last: string): { entry: BatchEntry; bytes: Uint8Array } {
  const bytes = encodeBatch({ lsn: last, commitTime: Date.parse("2024-05-01T00:00:00Z"), changes: [{ op: "upsert", record: { id: 1, name: `at ${last}`, email: "u0@x", status: "active" } }] });
  return { entry: { key: batchKey(first, last), firstLsn: first, lsn: last, commitTime: "2024-05-01T00:00:00.000Z", changes: 1, bytes: bytes.length, sha256: sha256Hex(bytes) }, bytes };
}

/**
 * The I/O threads with a gate before (or after) the first job of `kind`: `reached` settles when
 * that job comes (or has run), `open()` lets it go on.
 */
function gatedThreads(kind: string, when: "before" | "after"): { threads: FileThreads; reached: Promise<void>; open: () => void } {
  let arrive = () => {};
  let open = () => {};
  const reached = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let held = false;
  return {
    threads: {
      ...threads,
      run: async (job, options) => {
        if (job.kind !== kind || held) return threads.run(job, options);
        held = true;
        if (when === "before") {
          arrive();
          await gate;
          return threads.run(job, options);
        }
        const result = await threads.run(job, options);
        arrive();
        await gate;
        return result;
      },
    },
    reached,
    open,
  };
}

describe("a live location's manifest: batches published while a compacted snapshot uploads", () => {
  for (const when of ["before", "after"] as const) {
    test(`a batch published while the snapshot waits ${when} its upload stays listed after it, with its object, and the snapshot's object stays`, async () => {
      const location = join(dir, `location-${when}`);
      await publishSnapshot(snapshotOf(`first-${when}`, 50), location, new Date(), { threads }, "0/100");
      const one = batchOf("0/110", "0/120");
      await publishBatch(location, one.entry, one.bytes, { threads });

      // the compaction: a snapshot at 0/120, held at the gate
      const gated = gatedThreads("upload", when);
      const compacted = snapshotOf(`compacted-${when}`, 60);
      const publishing = publishSnapshot(compacted, location, new Date(), { threads: gated.threads }, "0/120");
      await gated.reached;
      // meanwhile a batch after it (published on threads of its own: nothing holds it)
      const two = batchOf("0/130", "0/140");
      await publishBatch(location, two.entry, two.bytes, { threads });
      gated.open();
      await publishing;

      const manifest = await readManifest(openStorage(location));
      expect(manifest?.current.lsn).toBe("0/120");
      expect(manifest?.current.rows).toBe(60);
      // the batch after the compacted snapshot is listed, the one folded into it is not
      expect(manifest?.changes?.map((c) => c.key)).toEqual([two.entry.key]);
      expect(existsSync(join(location, two.entry.key))).toBe(true);
      expect(existsSync(join(location, one.entry.key))).toBe(false);
      // the snapshot it names is there
      expect(existsSync(join(location, manifest?.current.key as string))).toBe(true);
    });
  }
});
