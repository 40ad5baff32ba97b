/**
 * Test helper: the one place a test polls. A test waits on an event — a log line, an event of a
 * stream, an fs event, a process's exit, a promise — wherever one exists. Polling is left for
 * the few conditions that no event announces to this process:
 * - a process that is not this one's child ends (an orphan handed to the run, a supervisor's
 *   worker): only its parent is told, and /proc is the only view of it here;
 * - an object changes in remote storage (S3's manifest): S3 sends no notification;
 * - a row arrives in PostgreSQL from another connection, where the test holds no subscription.
 * It has no time bound: it checks until the condition holds, for as long as the test runs, and a
 * test whose condition never comes is ended by bun test's own per-test timeout.
 */

/** Pause between two checks, in ms: how soon a condition that came true is seen (not a limit). */
const STEP_MS = 10;

/**
 * Resolves with the first value of `check` that is not `undefined`, `null` or `false`, calling it
 * at once and then every {@link STEP_MS} ms; a check that throws rejects with its error.
 * @param check what to wait for: sync or async, its truthy-enough result is the answer
 */
export async function pollUntil<T>(check: () => T | undefined | null | false | Promise<T | undefined | null | false>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    await Bun.sleep(STEP_MS);
  }
}
