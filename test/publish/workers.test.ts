/**
 * `serve --workers N` as a process: N workers on one port behind SO_REUSEPORT, answering
 * together; one killed with SIGKILL is started again; SIGTERM drains them all and exits 0. With
 * `--source`, the supervisor follows the location, every worker swaps each new version in, and
 * the workers' /readyz show the source's status, which only the supervisor polls.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { publishBatch, publishSnapshot } from "../../src/publish/publish.ts";
import { type BatchEntry, batchKey, sha256Hex } from "../../src/live/batches.ts";
import { type Change, encodeBatch } from "../../src/live/changes.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";
import { pollUntil } from "../support/poll.ts";
import { isRunning } from "../support/processes.ts";
import { type ServeProcess, snapshotDir, spawnServe } from "../support/serve-process.ts";

let data: ReturnType<typeof snapshotDir>;
beforeAll(() => {
  data = snapshotDir(Array.from({ length: 200 }, (_, i) => ({ id: i + 1, name: `n${i}`, email: `e${i}@x`, status: "active" })));
});
afterAll(() => data.remove());

describe("serve --workers", () => {
  test("two workers share the port; a killed one is started again; SIGTERM stops them all", async () => {
    const supervisor: ServeProcess = await spawnServe(data.snapshot, ["--workers", "2", "--cache-dir", `${data.dir}/cache`]);
    try {
      const started = () => supervisor.logs().filter((l) => l.msg === "worker started").map((l) => l.pid as number);
      const listening = () => supervisor.logs().filter((l) => l.msg === "listening").length;
      await supervisor.waitForLine(() => listening() >= 2, { what: "two workers listening" });
      expect(listening()).toBe(2);
      const pids = started();
      expect(new Set(pids).size).toBe(2);
      const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`${supervisor.url}/api/users?pageSize=1`).then((r) => r.status)));
      expect(answers.every((s) => s === 200)).toBe(true);

      process.kill(pids[0], "SIGKILL");
      await supervisor.waitForLog("worker exited; starting it again");
      await supervisor.waitForLine(() => started().length >= 3, { what: "the worker started again" });
      expect(started().length).toBe(3);
      await supervisor.waitForLine(() => listening() >= 3, { what: "the new worker listening" });
      expect((await fetch(`${supervisor.url}/healthz`)).status).toBe(200);

      supervisor.child.kill("SIGTERM");
      expect(await supervisor.child.exited).toBe(0);
      await supervisor.finished();
      for (const pid of started()) {
        let alive = true;
        try {
          process.kill(pid, 0);
        } catch {
          alive = false;
        }
        expect(alive).toBe(false);
      }
    } finally {
      await supervisor.dispose();
    }
  }, 60_000);

  test("a supervisor killed with SIGKILL: its workers drain and exit, none stays bound to the port", async () => {
    const supervisor = await spawnServe(data.snapshot, ["--workers", "2", "--cache-dir", `${data.dir}/cache`]);
    try {
      await supervisor.waitForLine(() => supervisor.logs().filter((l) => l.msg === "listening").length >= 2, { what: "two workers listening" });
      const pids = supervisor.logs().filter((l) => l.msg === "worker started").map((l) => l.pid as number);
      expect(pids.length).toBe(2);
      for (const pid of pids) expect(isRunning(pid)).toBe(true);
      expect((await fetch(`${supervisor.url}/healthz`)).status).toBe(200);
      process.kill(supervisor.pid, "SIGKILL");
      // the workers write to the same stderr pipe as their supervisor: its end is read once the
      // last of them has exited
      await supervisor.finished();
      expect(supervisor.child.signalCode).toBe("SIGKILL");
      for (const pid of pids) expect(isRunning(pid)).toBe(false);
      expect(supervisor.logs().filter((l) => l.msg === "the supervisor is gone: draining, then exiting").length).toBe(2);
      expect(supervisor.logs().filter((l) => l.msg === "drained").length).toBe(2);
      // nothing listens on the port any more
      expect(await fetch(`${supervisor.url}/healthz`).then(() => "answered", () => "refused")).toBe("refused");
    } finally {
      await supervisor.dispose();
    }
  }, 60_000);

  test("with --source: the supervisor follows, every worker swaps the new version in, and their /readyz show the source", async () => {
    const location = join(data.dir, "published");
    const snapshotOf = (tag: string, n: number) => {
      const path = join(data.dir, `${tag}.snap`);
      writeSnapshot(path, buildStoreFromRecords(Array.from({ length: n }, (_, i) => ({ id: i + 1, name: `${tag} ${i}`, email: `u${i}@x`, status: "active" }))));
      return path;
    };
    const v1 = await publishSnapshot(snapshotOf("w-one", 30), location);
    const supervisor = await spawnServe(null, ["--workers", "2", "--source", location, "--poll", "1", "--cache-dir", join(data.dir, "workers-source")]);
    try {
      const count = (match: (l: { msg: string; [k: string]: unknown }) => boolean) => supervisor.logs().filter(match).length;
      await supervisor.waitForLine(() => count((l) => l.msg === "listening") >= 2, { what: "two workers listening" });
      const ids = async () => new Set(await Promise.all(Array.from({ length: 20 }, async () => (await fetch(`${supervisor.url}/api/users?pageSize=1`)).headers.get("x-snapshot-id"))));
      expect([...(await ids())]).toEqual([v1.current.snapshotId]);
      // each worker learns the source's status from the supervisor (the next poll's, at the
      // latest); no line is logged for it, so /readyz is asked until it shows
      await pollUntil(async () => {
        const ready = (await (await fetch(`${supervisor.url}/readyz`)).json()) as { source?: { lastPoll: { result: string } | null } };
        return ready.source?.lastPoll?.result === "ok";
      });
      const v2 = await publishSnapshot(snapshotOf("w-two", 45), location);
      await supervisor.waitForLine(() => count((l) => l.msg === "snapshot reloaded" && l.snapshotId === v2.current.snapshotId) >= 2, { what: "both workers on v2" });
      expect([...(await ids())]).toEqual([v2.current.snapshotId]);
      const readies = await Promise.all(Array.from({ length: 10 }, async () => (await (await fetch(`${supervisor.url}/readyz`)).json()) as { snapshotId: string; source: { latestSnapshotId: string } }));
      for (const ready of readies) expect(ready).toMatchObject({ snapshotId: v2.current.snapshotId, source: { latestSnapshotId: v2.current.snapshotId } });
      supervisor.child.kill("SIGTERM");
      expect(await supervisor.child.exited).toBe(0);
    } finally {
      await supervisor.dispose();
    }
  }, 60_000);

  test("with --source of a live table: a worker never serves a snapshot without the batches listed after it, at a swap or at a restart", async () => {
    const location = join(data.dir, "live-published");
    type Row = { id: number; name: string; email: string; status: string };
    const rowsOf = (tag: string) => Array.from({ length: 40 }, (_, i): Row => ({ id: i + 1, name: `${tag} ${i}`, email: `u${i}@x`, status: "active" }));
    const snapshotAt = async (name: string, rows: Row[], lsn: string) => {
      const path = join(data.dir, `${name}.snap`);
      writeSnapshot(path, buildStoreFromRecords(rows));
      return (await publishSnapshot(path, location, new Date(), {}, lsn)).current.snapshotId;
    };
    const batchAt = async (firstLsn: string, lsn: string, changes: Change[]) => {
      const bytes = encodeBatch({ lsn, commitTime: Date.now(), changes });
      const entry: BatchEntry = { key: batchKey(firstLsn, lsn), firstLsn, lsn, commitTime: new Date().toISOString(), changes: changes.length, bytes: bytes.length, sha256: sha256Hex(bytes) };
      await publishBatch(location, entry, bytes);
    };
    const rename = (rows: Row[], id: number, name: string) => rows.map((r) => (r.id === id ? { ...r, name } : r));
    // the first snapshot at 0/100 and a batch after it
    let rows = rowsOf("v1");
    const s1 = await snapshotAt("live-one", rows, "0/100");
    await batchAt("0/180", "0/200", [{ op: "upsert", record: { ...rows[0], name: "b1" } }]);
    rows = rename(rows, 1, "b1");
    const supervisor = await spawnServe(null, ["--workers", "2", "--source", location, "--poll", "0.5", "--cache-dir", join(data.dir, "live-workers")]);
    /** Every X-Snapshot-Id answered, each on a new connection (the kernel spreads them over the workers). */
    const seen: string[] = [];
    /** Called after each answer seen. */
    let onSeen = () => {};
    let probing = true;
    const prober = (async () => {
      while (probing) {
        try {
          const response = await fetch(`${supervisor.url}/api/users?pageSize=1`, { headers: { connection: "close" } });
          await response.arrayBuffer();
          if (response.status === 200) seen.push(String(response.headers.get("x-snapshot-id")));
          onSeen();
        } catch {
          // a connection to the worker killed below
        }
      }
    })();
    try {
      const count = (match: (l: { msg: string; [k: string]: unknown }) => boolean) => supervisor.logs().filter(match).length;
      await supervisor.waitForLine(() => count((l) => l.msg === "listening") >= 2, { what: "two workers listening" });
      // two more batches while the first snapshot is current, then the snapshot of their
      // compaction up to the first of them: it is listed with the last batch after it
      await batchAt("0/280", "0/300", [{ op: "upsert", record: { ...rows[1], name: "b2" } }]);
      rows = rename(rows, 2, "b2");
      const compacted = rows;
      const b3 = { ...rows[2], name: "b3" };
      await batchAt("0/380", "0/400", [{ op: "upsert", record: b3 }, { op: "delete", key: 40 }]);
      // (the compacted snapshot's emails differ from the first one's: what is served shows which)
      const s2rows = compacted.map((r) => ({ ...r, email: `${r.email}.2` }));
      const s2 = await snapshotAt("live-two", s2rows, "0/300");
      rows = s2rows.map((r) => (r.id === 3 ? b3 : r)).filter((r) => r.id !== 40);
      await supervisor.waitForLine(() => count((l) => l.msg === "snapshot reloaded" && l.snapshotId === s2) >= 2, { what: "both workers on the compacted snapshot" });
      // a worker started again: it applies the batches before it serves
      const before = count((l) => l.msg === "listening");
      process.kill(supervisor.logs().filter((l) => l.msg === "worker started")[0].pid as number, "SIGKILL");
      await supervisor.waitForLine(() => count((l) => l.msg === "listening") > before, { what: "the restarted worker listening" });
      const after = seen.length;
      await new Promise<void>((resolve) => {
        onSeen = () => {
          if (seen.length >= after + 40) resolve();
        };
        onSeen();
      });
      probing = false;
      await prober;
      // every answer holds a snapshot with the batches listed after it, never the snapshot alone
      const allowed = [`${s1}@0/200`, `${s1}@0/300`, `${s1}@0/400`, `${s2}@0/400`];
      expect(seen.filter((id) => !allowed.includes(id))).toEqual([]);
      expect(seen.slice(after)).toEqual(Array(seen.length - after).fill(`${s2}@0/400`));
      expect(seen).toContain(`${s2}@0/400`);
      // and what they serve is the table with every batch applied
      for (let i = 0; i < 6; i++) {
        const response = await fetch(`${supervisor.url}/api/users/export?format=ndjson`, { headers: { connection: "close" } });
        const exported = (await response.text()).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
        expect(exported).toEqual(rows);
      }
    } finally {
      probing = false;
      await prober.catch(() => {});
      await supervisor.dispose();
    }
  }, 60_000);
});
