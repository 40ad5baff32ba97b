/**
 * `serve --workers N` as a process: N workers on one port behind SO_REUSEPORT, answering
 * together; one killed with SIGKILL is started again; SIGTERM drains them all and exits 0. With
 * `--source`, the supervisor follows the location, every worker swaps each new version in, and
 * the workers' /readyz show the source's status, which only the supervisor polls.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { publishSnapshot } from "../../src/publish/publish.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";
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
      await supervisor.waitForLog("worker exited; starting it again", 10_000);
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
      // each worker learns the source's status from the supervisor (the next poll's, at the latest)
      for (;;) {
        const ready = (await (await fetch(`${supervisor.url}/readyz`)).json()) as { source?: { lastPoll: { result: string } | null } };
        if (ready.source?.lastPoll?.result === "ok") break;
        await Bun.sleep(50);
      }
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
});
