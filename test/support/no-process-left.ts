/**
 * Preloaded by `bun test` (bunfig.toml): makes the run the reaper of the processes it starts
 * (support/processes.ts) and, once every test file has run, fails the run if any of them still
 * runs — a server, a worker orphaned by its supervisor, PostgreSQL, nginx, Chromium — after
 * killing it, so that the suite never leaves one behind. Each test stops what it starts in a
 * `finally` or an `afterAll` and waits for its exit there; this is the net under them, so it
 * waits for nothing: whatever runs now was left.
 */
import { afterAll } from "bun:test";
import { becomeSubreaper, descendantsOf, describeProcesses, killAll, whenEnded } from "./processes.ts";

const notReaper = becomeSubreaper();
if (notReaper !== null) console.warn(`orphaned test processes are not found (${notReaper}); only those whose parents live are`);

afterAll(async () => {
  const left = descendantsOf(process.pid);
  if (left.length === 0) return;
  killAll(left.map((p) => p.pid));
  await whenEnded(left.map((p) => p.pid));
  throw new Error(`the test run left ${left.length} process(es) running (killed now):\n${describeProcesses(left)}`);
});
