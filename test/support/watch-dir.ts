/**
 * Test helper: waiting on a local directory's changes (fs.watch, inotify on Linux) — a file
 * appearing, a manifest replaced — instead of listing it over and over.
 */
import { type FSWatcher, mkdirSync, watch } from "node:fs";

/**
 * Resolves with the first result of `check` that is not null, undefined or false: `check` is
 * called once the watch is set (so no change is missed between the two), then again after each
 * change fs.watch reports in `dir` (created first when missing). With `until`, resolves with null
 * once `until` settles and a last check finds nothing (e.g. the process that was to write the
 * file has exited). No time bound: a change that never comes is the test's timeout's to end.
 * @param dir the directory watched (not its subdirectories)
 * @param check what to wait for, sync or async
 * @param until when to stop waiting
 */
export async function untilInDir<T>(dir: string, check: () => T | null | undefined | false | Promise<T | null | undefined | false>, until?: Promise<unknown>): Promise<T | null> {
  mkdirSync(dir, { recursive: true });
  let changes = 0;
  let stopped = false;
  let wake = () => {};
  const watcher: FSWatcher = watch(dir, () => {
    changes++;
    wake();
  });
  void until?.then(
    () => {
      stopped = true;
      wake();
    },
    () => {
      stopped = true;
      wake();
    },
  );
  try {
    for (;;) {
      const seen = changes;
      const wasStopped = stopped;
      const value = await check();
      if (value !== null && value !== undefined && value !== false) return value;
      if (wasStopped) return null;
      if (changes === seen && !stopped) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      wake = () => {};
    }
  } finally {
    watcher.close();
  }
}
