/**
 * Our engine in-process: loadSnapshot + createEngine, and per query executeQuery + rowsToJson
 * (so serialization is included, as it is in every peer's answer).
 */
import { type Engine, createEngine, executeQuery } from "../../src/engine/execute.ts";
import type { Query } from "../../src/query/types.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { rowsToJson } from "../../src/store/rows-json.ts";
import type { Store } from "../../src/store/types.ts";
import type { Dataset } from "../datasets.ts";
import type { Answer, BenchEngine, OpenReport } from "./engine.ts";

let store: Store | null = null;
let engine: Engine | null = null;

/** Our columnar snapshot and engine. */
export const ours: BenchEngine = {
  name: "ours",
  note: "mmap'd snapshot (load verifies section hashes); executeQuery + rowsToJson",
  semantics: "same",
  maxRows: Number.POSITIVE_INFINITY,

  async open(dataset: Dataset): Promise<OpenReport> {
    const loaded = loadSnapshot(dataset.snapshot);
    store = loaded.store;
    engine = createEngine(store);
    return { readMs: 0, buildMs: loaded.loadMs, bytes: loaded.bytes, bytesNote: "snapshot file" };
  },

  run(query: Query): Answer {
    const e = engine as Engine;
    const page = executeQuery(e, query);
    const body = rowsToJson(e.store, page.rows);
    const ids = new Float64Array(page.rows.length);
    for (let i = 0; i < ids.length; i++) ids[i] = e.store.ids[page.rows[i]];
    return { total: page.total, ids, body };
  },

  fresh(): void {
    engine = createEngine(store as Store);
  },

  close(): void {
    engine = null;
    store = null;
  },
};
