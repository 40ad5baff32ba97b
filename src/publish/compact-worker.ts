/**
 * Worker entry of compaction (compact-file.ts `compactInWorker`): folds change batches into a new
 * snapshot file off the publisher's thread, so that batches go on being published meanwhile.
 * Listed as an entry point of `bun build --compile`.
 */
import type { ChangeBatch } from "../live/changes.ts";
import { compactSnapshotFile } from "./compact-file.ts";

/** A compaction to run: the base snapshot file, the batches after it in order, the output file. */
export interface CompactJob {
  base: string;
  batches: ChangeBatch[];
  output: string;
}

declare const self: Worker;

self.onmessage = async (event: MessageEvent<CompactJob>) => {
  try {
    const { base, batches, output } = event.data;
    self.postMessage({ written: await compactSnapshotFile(base, batches, output) });
  } catch (error) {
    self.postMessage({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
};
