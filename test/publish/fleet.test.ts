/**
 * The fleet test in the suite: scripts/fleet-test.ts at 200,000 rows over S3 (s3rver), for 60 s
 * of wrk load through nginx (docs/operations.md "7. The fleet test"). It starts PostgreSQL,
 * s3rver, the publisher loop, two replicas and nginx on loopback, commits a change during the
 * load, kills one replica with SIGKILL and restarts it, and exits 1 on any failed request or
 * any replica not on the latest version. Here its report is read back and checked too.
 * Needs PostgreSQL, nginx and wrk (`npm test`'s pretest installs them).
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..", "..");

/** The scenario's process while the test runs. */
let child: Subprocess<"ignore", "pipe", "pipe"> | null = null;

// A test ended by its timeout leaves its scenario running: it is stopped here (SIGTERM: the
// script stops what it started) and waited for.
afterEach(async () => {
  if (child !== null && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  await child?.exited;
  child = null;
});

describe("the fleet: PostgreSQL → build → publish to S3 → two replicas behind nginx, under wrk load", () => {
  test("no failed request while a change is built, published and followed, and a replica is killed and restarted", async () => {
    child = Bun.spawn([process.execPath, join(ROOT, "scripts", "fleet-test.ts"), "--rows", "200000", "--seconds", "60", "--location", "s3"], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    const report = `${out}${err}`;
    if (code !== 0) console.error(report);
    expect(code).toBe(0);
    expect(report).toContain("PASS");
    // wrk's own counts, as the script printed them
    const load = /wrk through nginx: (\d+) requests in [\d.]+ s \(\d+ req\/s\), p99 [^,]+, non-2xx (\d+), socket errors (\d+)/.exec(report);
    expect(load).not.toBeNull();
    const [, requests, non2xx, socketErrors] = load as RegExpExecArray;
    expect(Number(requests)).toBeGreaterThan(1000);
    expect(Number(non2xx)).toBe(0);
    expect(Number(socketErrors)).toBe(0);
    // both replicas followed the change, and the restarted one came back on that version
    const fresh = /change committed → both replicas serving ([0-9a-f]{16})/.exec(report);
    expect(fresh).not.toBeNull();
    const restarted = /killed \(SIGKILL [\d.]+ s into the load\) and started again: ready with ([0-9a-f]{16})/.exec(report);
    expect(restarted).not.toBeNull();
    expect((restarted as RegExpExecArray)[1]).toBe((fresh as RegExpExecArray)[1]);
  }, 300_000);
});
