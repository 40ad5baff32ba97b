/**
 * The benchmark's query model: what Q1–Q8 ask (bench/queries.ts), in terms every engine of the
 * benchmark translates — the peers into SQL or array code (engines/engine.ts `peerPlan`), ours
 * into its normalized query (engines/ours.ts `toQuery`). It names the generated users' columns
 * (src/generate/record.ts): the benchmark's data is the default data's shape.
 */
import type { SortKey } from "../src/query/types.ts";

/** A column of the generated users. */
export type ColumnId = "id" | "name" | "email" | "status";

/**
 * A predicate of the benchmark: a substring on `name` or `email`, a set of statuses (indexes
 * into src/generate/record.ts `STATUS_VALUES`), or an AND of them.
 */
export type BenchPredicate =
  | { kind: "text"; column: "name" | "email"; op: "contains"; value: string }
  | { kind: "status"; codes: number[] }
  | { kind: "and"; children: BenchPredicate[] };

/** A query of the benchmark: a filter (null for none), sort keys, the row window. */
export interface BenchQueryShape {
  filter: BenchPredicate | null;
  sort: SortKey[];
  /** First row of the window, >= 0. */
  offset: number;
  /** Rows in the window, >= 0. */
  limit: number;
}

export type { SortKey };
