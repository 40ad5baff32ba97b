/**
 * The interface every benchmarked engine implements, and the translation of the benchmark's
 * normalized queries into the plain terms the peers need (folded needles, status codes, and
 * an order over rank columns that ends with the id tie-break of docs/api.md "Ordering").
 */
import { fold } from "../../src/collation/collation.ts";
import type { BenchPredicate as Predicate, BenchQueryShape as Query } from "../query-model.ts";
import type { Dataset } from "../datasets.ts";

/** One answer: the window as JSON bytes or text (an array of records), its ids, the total. */
export interface Answer {
  /** Rows matching the filter. */
  total: number;
  /** The window's ids, in order. */
  ids: ArrayLike<number>;
  /** `[{"id":…,"name":…,"email":…,"status":…}, …]`: serialization is part of every engine's cost. */
  body: string | Uint8Array;
}

/** What opening an engine over a dataset cost. */
export interface OpenReport {
  /** Reading the inputs from the cache (the peers' column files), in ms; 0 when the build reads them itself. */
  readMs: number;
  /** Building the queryable state (inserts and indexes, table creation, or loading our snapshot), in ms. */
  buildMs: number;
  /** The engine's own storage, in bytes, when it can say (file size, database pages). */
  bytes: number | null;
  /** What `bytes` measures. */
  bytesNote: string;
}

/** A benchmarked engine: one object per module, opened over one dataset per process. */
export interface BenchEngine {
  name: string;
  /** Shown beside its figures: what it runs on and any help it gets. */
  note: string;
  /** "different": answers are not expected to match ours (timed anyway, not checked). */
  semantics: "same" | "different";
  /** Largest dataset it is run on. */
  maxRows: number;
  open(dataset: Dataset): Promise<OpenReport>;
  run(query: Query): Answer | Promise<Answer>;
  /** Drops any cache, so the next query is a first request (ours: a new engine over the same store). */
  fresh(): void;
  close(): Promise<void> | void;
}

/** A sortable column of the peers: `id`, `status`, or a string column's rank. */
export type PeerSortColumn = "id" | "status" | "name_rank" | "email_rank";

/** The benchmark's query subset in the peers' terms. */
export interface PeerPlan {
  /** Substring tests on folded columns, all of which must hold; needles already folded. */
  contains: { column: "name_folded" | "email_folded"; needle: string }[];
  /** Allowed status codes, or null for any. */
  statusCodes: number[] | null;
  /** Full order, ending with the id tie-break. */
  order: { column: PeerSortColumn; desc: boolean }[];
  offset: number;
  limit: number;
}

/** Adds one predicate of the benchmark's subset to a plan. */
function addPredicate(plan: PeerPlan, predicate: Predicate): void {
  if (predicate.kind === "and") {
    for (const child of predicate.children) addPredicate(plan, child);
  } else if (predicate.kind === "status") {
    plan.statusCodes = plan.statusCodes === null ? [...predicate.codes] : plan.statusCodes.filter((c) => predicate.codes.includes(c));
  } else if (predicate.kind === "text" && predicate.op === "contains" && (predicate.column === "name" || predicate.column === "email")) {
    plan.contains.push({ column: predicate.column === "name" ? "name_folded" : "email_folded", needle: fold(predicate.value) });
  } else {
    throw new Error(`the peers do not implement ${JSON.stringify(predicate)}`);
  }
}

/**
 * Translates a query: string columns sort by their rank column (the snapshot's collation rank:
 * exactly our order, with collator-equal values tied), then by id — ascending when the last key
 * is ascending (or there is none), descending when it is descending.
 */
export function peerPlan(query: Query): PeerPlan {
  const plan: PeerPlan = { contains: [], statusCodes: null, order: [], offset: query.offset, limit: query.limit };
  if (query.filter !== null) addPredicate(plan, query.filter);
  for (const key of query.sort) {
    if (key.absolute) throw new Error("the peers do not implement absolute sorts");
    if (key.column !== "id" && key.column !== "status" && key.column !== "name" && key.column !== "email") throw new Error(`the peers do not sort on ${key.column}`);
    const column: PeerSortColumn = key.column === "name" ? "name_rank" : key.column === "email" ? "email_rank" : key.column;
    plan.order.push({ column, desc: key.direction === "desc" });
  }
  const last = query.sort[query.sort.length - 1];
  if (last === undefined || last.column !== "id") plan.order.push({ column: "id", desc: last !== undefined && last.direction === "desc" });
  return plan;
}
