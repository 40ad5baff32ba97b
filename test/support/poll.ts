/**
 * Test helper: the one place a test polls. A test waits on an event — a log line, an event of a
 * stream, an fs event, a process's exit, a promise — wherever one exists. Polling is left for
 * the few conditions that no event announces to this process:
 * - a process that is not this one's child ends (an orphan handed to the run, a supervisor's
 *   worker): only its parent is told, and /proc is the only view of it here;
 * - an object changes in remote storage (S3's manifest): S3 sends no notification;
 * - PostgreSQL's state moves (a slot's confirmed position, a backend's activity): it tells nobody;
 * - a server's state that it neither logs nor streams (a worker's /readyz, a freed stream place).
 * The fleet scenarios (scripts/fleet-harness.ts `waitFor`) wait through it too.
 * It has no time bound: it checks until the condition holds, for as long as the test runs, and a
 * test whose condition never comes is ended by bun test's own per-test timeout.
 */

/** Default pause between two checks, in ms: how soon a condition that came true is seen (not a limit). */
export const STEP_MS = 10;

/**
 * Resolves with the first value of `check` that is not `undefined`, `null` or `false`, calling it
 * at once and then every `stepMs` ms; a check that throws rejects with its error.
 * @param check what to wait for: sync or async, its truthy-enough result is the answer
 * @param stepMs pause between checks (default {@link STEP_MS}): longer where a check costs (a
 *   request to a server under measured load)
 */
export async function pollUntil<T>(check: () => T | undefined | null | false | Promise<T | undefined | null | false>, stepMs = STEP_MS): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    await Bun.sleep(stepMs);
  }
}
