/**
 * Preloaded by `bun test` (bunfig.toml): makes the run the reaper of the processes it starts
 * (support/processes.ts) and, once every test file has run, fails the run if any of them still
 * runs — a server, a worker orphaned by its supervisor, PostgreSQL, nginx, Chromium — after
 * killing it, so that the suite never leaves one behind. Each test stops what it starts in a
 * `finally` or an `afterAll`; this is the net under them.
 */
import { afterAll } from "bun:test";
import { becomeSubreaper, describeProcesses, killAll, whenDescendantsEnded } from "./processes.ts";

const notReaper = becomeSubreaper();
if (notReaper !== null) console.warn(`orphaned test processes are not found (${notReaper}); only those whose parents live are`);

/**
 * Longest wait for the processes being stopped to exit, in ms (a bound, not a speed);
 * `NO_PROCESS_LEFT_BOUND_MS` sets it (support/processes.test.ts runs a file that leaves a
 * process that never exits).
 */
const BOUND_MS = Number(process.env.NO_PROCESS_LEFT_BOUND_MS) > 0 ? Number(process.env.NO_PROCESS_LEFT_BOUND_MS) : 30_000;

afterAll(async () => {
  const left = await whenDescendantsEnded(new Set(), BOUND_MS);
  if (left.length === 0) return;
  killAll(left.map((p) => p.pid));
  throw new Error(`the test run left ${left.length} process(es) running (killed now):\n${describeProcesses(left)}`);
}, BOUND_MS + 10_000);
