/**
 * Compaction of a published snapshot (docs/live-replicas.md §6): a snapshot file and the change
 * batches after it, folded into a new snapshot file without reading the source again.
 */
import { applyChanges, createEngine } from "../engine/execute.ts";
import type { ChangeBatch } from "../live/changes.ts";
import { compactTable } from "../live/compact.ts";
import { createDelta, emptyVersion } from "../live/delta.ts";
import { loadSnapshot } from "../snapshot/load.ts";
import { writeSnapshotAsync } from "../snapshot/write.ts";
import { buildStoreParallel } from "../store/build.ts";

/**
 * Compaction of a snapshot file (docs/live-replicas.md §6): the snapshot at `base` with `batches`
 * applied, built and written to `output` (its temporary file renamed into place: a failure
 * leaves nothing at `output`).
 * @returns the written snapshot's id and size in bytes
 * @throws SnapshotError for a base that does not load; BatchError for a batch that does not apply
 */
export async function compactSnapshotFile(base: string, batches: readonly ChangeBatch[], output: string): Promise<{ snapshotId: string; bytes: number }> {
  let engine = createEngine(loadSnapshot(base).store);
  for (const batch of batches) engine = applyChanges(engine, batch);
  const version = engine.live;
  const table = version === null ? compactTable(emptyVersion(createDelta(engine.store), "0/0")) : compactTable(version);
  // the engine is done with: only the table is needed from here
  engine = null as unknown as typeof engine;
  const store = await buildStoreParallel(table);
  return writeSnapshotAsync(output, store);
}

/** The compaction worker's module, in a source tree or inside a compiled binary. */
function workerSpecifier(): string {
  if (import.meta.url.startsWith("file:///$bunfs/")) return "./publish/compact-worker.ts";
  return new URL("./compact-worker.ts", import.meta.url).href;
}

/**
 * {@link compactSnapshotFile} in a worker thread: the caller's event loop stays free (a publisher
 * goes on publishing batches while a compaction of millions of rows runs).
 * @throws Error with the worker's message when the compaction fails
 */
export function compactInWorker(base: string, batches: readonly ChangeBatch[], output: string): Promise<{ snapshotId: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerSpecifier());
    worker.onmessage = (event: MessageEvent<{ written?: { snapshotId: string; bytes: number }; error?: string }>) => {
      worker.terminate();
      if (event.data.written !== undefined) resolve(event.data.written);
      else reject(new Error(`compaction failed: ${event.data.error}`));
    };
    worker.onerror = (event) => {
      worker.terminate();
      reject(new Error(`compaction failed: ${event.message}`));
    };
    worker.postMessage({ base, batches: [...batches], output });
  });
}
