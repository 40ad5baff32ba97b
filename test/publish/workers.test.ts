/**
 * `serve --workers N` as a process: N workers on one port behind SO_REUSEPORT, answering
 * together; one killed with SIGKILL is started again; SIGTERM drains them all and exits 0.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
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
      for (let i = 0; i < 100 && supervisor.logs().filter((l) => l.msg === "listening").length < 2; i++) await Bun.sleep(100);
      expect(supervisor.logs().filter((l) => l.msg === "listening").length).toBe(2);
      const pids = started();
      expect(new Set(pids).size).toBe(2);
      const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`${supervisor.url}/api/users?pageSize=1`).then((r) => r.status)));
      expect(answers.every((s) => s === 200)).toBe(true);

      process.kill(pids[0], "SIGKILL");
      await supervisor.waitForLog("worker exited; starting it again", 10_000);
      for (let i = 0; i < 100 && started().length < 3; i++) await Bun.sleep(100);
      expect(started().length).toBe(3);
      for (let i = 0; i < 100 && supervisor.logs().filter((l) => l.msg === "listening").length < 3; i++) await Bun.sleep(100);
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
});
