/**
 * The live fleet in the suite: scripts/fleet-live.ts, bounded, at 20,000 rows for 40 s of wrk
 * load through nginx (docs/operations.md "Live replicas: every commit within a second"):
 * PostgreSQL with `wal_level = logical`, the publisher (`snapshot follow`) to s3rver, two
 * replicas behind nginx, a change stream of inserts, deletes, updates of sort keys and of the
 * key, multi-row transactions and transfers, a burst, compactions, the publisher and then one
 * replica killed with SIGKILL and started again. The script checks every answer through nginx, that
 * no read saw half a transaction, that no replica went back, that both replicas' full exports
 * equal PostgreSQL's rows, that the slot's confirmed LSN advanced, and that every transaction
 * PostgreSQL committed (as its own test_decoding plugin reports them on a second slot) was
 * announced to a listener of `GET /api/users/changes` on each replica and one through nginx —
 * its keys in the first change event past its commit, or a `"keys": null` refresh — across the
 * kills, a reconnect with `Last-Event-ID` after a listener was away, and the burst; it prints
 * PASS, and its report is read back here. Needs PostgreSQL, nginx and wrk (`npm test`'s pretest installs them).
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

describe("the live fleet: PostgreSQL's changes → publisher → S3 → two replicas behind nginx, under wrk load", () => {
  test("every committed change reaches both replicas whole and in order and is announced to a listener on each, with the publisher and a replica killed, and nothing fails", async () => {
    const args = ["--rows", "20000", "--seconds", "40", "--rate", "200", "--compact-seconds", "15", "--burst", "5000", "--location", "s3"];
    child = Bun.spawn([process.execPath, join(ROOT, "scripts", "fleet-live.ts"), ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    const report = `${out}${err}`;
    if (code !== 0) console.error(report);
    expect(code).toBe(0);
    expect(report).toMatch(/^.*PASS$/m);
    // the scenario's own counts, as it printed them
    const figures = /figures \(load average [^)]*\): .*?; (\d+) requests, \d+ req\/s, non-2xx (\d+), socket errors (\d+); (\d+) changes\/s/.exec(report);
    expect(figures).not.toBeNull();
    const [, requests, non2xx, socketErrors, changesPerSecond] = figures as RegExpExecArray;
    expect(Number(requests)).toBeGreaterThan(1000);
    expect(Number(non2xx)).toBe(0);
    expect(Number(socketErrors)).toBe(0);
    expect(Number(changesPerSecond)).toBeGreaterThan(0);
    // the kills happened during the load, and each process came back
    expect(report).toMatch(/publisher killed \(SIGKILL [\d.]+ s into the load, \d+ changes committed so far\) and started again/);
    expect(report).toMatch(/replica on \d+ killed \(SIGKILL [\d.]+ s into the load\) and started again: ready after/);
    // both replicas end equal to the table
    expect(report.match(/rows, equal to PostgreSQL's/g)?.length).toBe(2);
    expect(report).not.toContain("DIFFERS");
    // every committed transaction announced to each listener (two replicas, nginx)
    const announced = /change events: every committed transaction \((\d+)\) announced to each of (\d+) listeners/.exec(report);
    expect(announced).not.toBeNull();
    expect(Number(announced?.[1])).toBeGreaterThan(1000);
    expect(Number(announced?.[2])).toBe(3);
    // the killed replica's listener connected again; the one closed on purpose was sent what it missed
    expect(report).toMatch(/listener on replica \d+: closed [\d.]+ s into the load while \d+ ticks were applied there, then connected again/);
    expect(report).toMatch(/listener on replica \d+: [2-9]\d* streams opened \(\d+ reconnects sent the events missed, \d+ a refresh\)/);
    expect(report).toMatch(/listener on replica \d+: \d+ streams opened \([1-9]\d* reconnects sent the events missed/);
  }, 600_000);
});
