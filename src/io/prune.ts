/**
 * Removing older copies from a cache directory, on an I/O thread, until none is left: a copy
 * still mapped (an older version not yet released by the garbage collector, or mapped by
 * another process) is left (snapshot/private-copy.ts `pruneCache`) and tried again later, so
 * that freeing a large file — the kernel dropping its pages and blocks — happens here, never
 * when the request thread lets the mapping go.
 */
import type { Logger } from "pino";
import type { FileThreads } from "./threads.ts";

/** Delay before a copy left in use is tried again, in ms. */
const RETRY_MS = 30_000;

/**
 * A pruner of `cacheDir`: each call removes every copy but `keep` (in the background; failures
 * are logged at warn level), and tries again every {@link RETRY_MS} while some copy is in use.
 * @param quiet true while the process stops (a prune cut short then is no failure)
 */
export function createPruner(threads: FileThreads, cacheDir: string, timeoutMs: number, logger: Logger, quiet: () => boolean = () => false): { prune: (keep: string) => void; stop: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const prune = (keep: string) => {
    clearTimeout(timer);
    threads.run({ kind: "prune", cacheDir, keep: [keep] }, { timeoutMs, label: `pruning the cache directory ${cacheDir}` }).then(
      ({ inUse }) => {
        if (inUse.length === 0) return;
        timer = setTimeout(() => prune(keep), RETRY_MS);
        timer.unref?.();
      },
      (error: unknown) => {
        if (!quiet()) logger.warn({ err: error, cacheDir }, "pruning the cache failed; the older copies stay until the next load");
      },
    );
  };
  return { prune, stop: () => clearTimeout(timer) };
}
