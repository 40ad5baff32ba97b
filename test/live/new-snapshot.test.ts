/**
 * A live replica (publish/follow.ts, server.ts) over a directory location, in this process: it
 * starts with the batches listed after its first snapshot already applied, and when a new
 * snapshot is published (a compaction at an LSN the replica has passed) it swaps it in with the
 * batches listed after it already applied — the state it serves never goes back to the new
 * snapshot's LSN, not even between the swap and the follower's next step.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { type FileThreads, createFileThreads } from "../../src/io/threads.ts";
import { type BatchEntry, batchKey, sha256Hex } from "../../src/live/batches.ts";
import { encodeBatch } from "../../src/live/changes.ts";
import { type FollowOptions, createSourceTracker, followSource, waitForFirst } from "../../src/publish/follow.ts";
import { publishBatch, publishSnapshot } from "../../src/publish/publish.ts";
import { startServer } from "../../src/server.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";

let dir: string;
let threads: FileThreads;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "users-live-swap-"));
  threads = createFileThreads();
});
afterAll(() => {
  threads.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A snapshot of `n` users named after `tag`, user 1 named `first`. */
function snapshotOf(tag: string, n: number, first: string): string {
  const path = join(dir, `${tag}.snap`);
  writeSnapshot(path, buildStoreFromRecords(Array.from({ length: n }, (_, i) => ({ id: i + 1, name: i === 0 ? first : `${tag} ${i}`, email: `u${i}@x`, status: "active" }))));
  return path;
}

/** A batch from `first` to `last` naming user 1 `at <last>`, with its manifest entry. */
function batchOf(first: string, last: string): { entry: BatchEntry; bytes: Uint8Array } {
  const bytes = encodeBatch({ lsn: last, commitTime: Date.parse("2024-05-01T00:00:00Z"), changes: [{ op: "upsert", record: { id: 1, name: `at ${last}`, email: "u0@x", status: "active" } }] });
  return { entry: { key: batchKey(first, last), firstLsn: first, lsn: last, commitTime: "2024-05-01T00:00:00.000Z", changes: 1, bytes: bytes.length, sha256: sha256Hex(bytes) }, bytes };
}

/** User 1's name and the total, as the server at `url` answers them. */
async function userOne(url: string): Promise<{ name: string; total: number; version: string | null }> {
  const response = await fetch(`${url}/api/users?sortBy=id&pageSize=1`);
  const body = (await response.json()) as { data: { name: string }[]; total: number };
  return { name: body.data[0].name, total: body.total, version: response.headers.get("x-snapshot-id") };
}

describe("a live replica's snapshots and the batches after them", () => {
  test("served from the start with the listed batches; a new snapshot swapped in with the batches after it applied", async () => {
    const location = join(dir, "location");
    const logger = pino({ level: "silent" });
    await publishSnapshot(snapshotOf("first", 50, "Ana"), location, new Date(), { threads }, "0/100");
    const one = batchOf("0/110", "0/120");
    await publishBatch(location, one.entry, one.bytes, { threads });

    const options: FollowOptions = {
      location,
      downloadsDir: join(dir, "downloads"),
      cacheDir: join(dir, "cache"),
      pollSeconds: 0.05,
      timeoutMs: 30_000,
      threads,
      tracker: createSourceTracker(location, logger),
      logger,
    };
    const first = await waitForFirst(options);
    if (first === null || first.entry.lsn === undefined) throw new Error("no live snapshot");
    expect(first.batches.map((b) => b.lsn)).toEqual(["0/120"]);
    const server = startServer({
      snapshot: first.path,
      prepared: first.prepared,
      live: { snapshotLsn: first.entry.lsn, batches: first.batches },
      owned: true,
      port: 0,
      host: "127.0.0.1",
      maxPageSize: 100,
      logger,
      cacheDir: options.cacheDir,
      threads,
      source: options.tracker.status,
    });
    let stopFollowing = () => {};
    try {
      // the first answer already holds the batch
      expect(await userOne(server.url)).toEqual({ name: "at 0/120", total: 50, version: `${first.entry.snapshotId}@0/120` });
      const healthz = (await (await fetch(`${server.url}/healthz`)).json()) as { lsn?: string; lagSeconds?: number };
      expect(healthz).toMatchObject({ lsn: "0/120", lagSeconds: 0 });

      // a batch after 0/120, then a compaction published at 0/120 (60 rows; user 1 as at 0/120)
      const two = batchOf("0/130", "0/140");
      await publishBatch(location, two.entry, two.bytes, { threads });
      const compacted = await publishSnapshot(snapshotOf("compacted", 60, "at 0/120"), location, new Date(), { threads }, "0/120");
      expect(compacted.changes?.map((c) => c.lsn)).toEqual(["0/140"]);

      // the follower swaps the compacted snapshot in; what is served right after the swap
      // (before the follower's next step) is recorded
      const swapped = new Promise<{ lsn: string | null; answer: Awaited<ReturnType<typeof userOne>> }>((resolve, reject) => {
        stopFollowing = followSource(
          {
            snapshotId: () => server.engine().store.snapshotId,
            reload: async (fetched, batches) => {
              try {
                await server.reload(fetched, batches);
                resolve({ lsn: server.changes.lsn(), answer: await userOne(server.url) });
              } catch (error) {
                reject(error);
                throw error;
              }
            },
            changes: server.changes,
          },
          options,
        );
      });
      const after = await swapped;
      expect(after.lsn).toBe("0/140");
      expect(after.answer).toEqual({ name: "at 0/140", total: 60, version: `${compacted.current.snapshotId}@0/140` });
    } finally {
      stopFollowing();
      await server.stop();
    }
  });
});
