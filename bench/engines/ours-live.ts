/**
 * Our engine over a live replica's state (docs/live-replicas.md): the dataset's snapshot with 1%
 * of its rows changed (bench/live-changes.ts) applied as change batches — `oursLive` answers
 * from the snapshot plus the delta, `oursCompacted` from a snapshot built from the same rows
 * (compaction). Both answer the same; the question is what the delta costs each query class.
 */
import { type Engine, applyChanges, createEngine, executeQuery, extraRecords } from "../../src/engine/execute.ts";
import { compactTable } from "../../src/live/compact.ts";
import type { DeltaVersion } from "../../src/live/delta.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { buildStore } from "../../src/store/build.ts";
import { recordAt, rowsToJson } from "../../src/store/rows-json.ts";
import type { Store } from "../../src/store/types.ts";
import type { BenchQueryShape as Query } from "../query-model.ts";
import type { Dataset } from "../datasets.ts";
import { changeBatches } from "../live-changes.ts";
import type { Answer, BenchEngine, OpenReport } from "./engine.ts";
import { toQuery } from "./ours.ts";

/** The fraction of rows changed (env LIVE_FRACTION, default 0.01). */
const FRACTION = Number(process.env.LIVE_FRACTION ?? 0.01);

/** One of the two engines: over the delta, or over the compacted snapshot. */
function liveEngine(name: "oursLive" | "oursCompacted"): BenchEngine {
  let engine: Engine | null = null;
  let fresh: () => Engine = () => engine as Engine;
  return {
    name,
    note: name === "oursLive" ? `snapshot + ${FRACTION * 100}% of the rows changed, as applied change batches` : `a snapshot compacted from the same changes`,
    semantics: "same",
    maxRows: Number.POSITIVE_INFINITY,
    async open(dataset: Dataset): Promise<OpenReport> {
      const loaded = loadSnapshot(dataset.snapshot);
      const t0 = performance.now();
      let live = createEngine(loaded.store);
      for (const batch of changeBatches(loaded.store, FRACTION)) live = applyChanges(live, batch);
      if (name === "oursLive") {
        const version = live.live as DeltaVersion;
        const store: Store = loaded.store;
        engine = live;
        // a new engine version of the same state: empty caches, the delta's kept places and passes stay
        fresh = () => ({ ...createEngine(store), live: version });
      } else {
        const store = buildStore(compactTable(live.live as DeltaVersion));
        engine = createEngine(store);
        fresh = () => createEngine(store);
      }
      return { readMs: 0, buildMs: loaded.loadMs + performance.now() - t0, bytes: loaded.bytes, bytesNote: "snapshot file" };
    },
    run(query: Query): Answer {
      const e = engine as Engine;
      const page = executeQuery(e, toQuery(query));
      const extra = extraRecords(e);
      const body = rowsToJson(e.store, page.rows, extra);
      const key = e.store.schema.key;
      const ids = new Float64Array(page.rows.length);
      for (let i = 0; i < ids.length; i++) ids[i] = recordAt(e.store, page.rows[i], extra)[key] as number;
      return { total: page.total, ids, body };
    },
    fresh(): void {
      engine = fresh();
    },
    close(): void {
      engine = null;
    },
  };
}

export const oursLive = liveEngine("oursLive");
export const oursCompacted = liveEngine("oursCompacted");
