/**
 * Question: which queries does every engine answer? The query classes Q1…Q8 as normalized
 * queries (src/query/types.ts), the same objects for every engine, and how they are timed:
 *
 * | class | query |
 * |---|---|
 * | Q1 | first page, sort name asc, 10 rows |
 * | Q2 | deep page: sort email desc, offset = half the rows, 100 rows |
 * | Q3 | email contains a 3-letter needle, sort id, 100 rows |
 * | Q4 | status = inactive, sort name desc, offset 10,000 (clamped), 100 rows |
 * | Q5 | status = active and name contains a 3-letter needle, sort email asc, offset 200, 100 rows |
 * | Q6 | no sort or filter, offset 90% of the rows, 100 rows |
 * | Q7 | AG Grid session: the 10 consecutive 100-row blocks of email contains needle, sort name asc |
 * | Q8 | two-key sort (status asc, name desc), offset = half the rows, 100 rows |
 *
 * Timed series (the `query` of a latency record):
 * - `Q1`, `Q2`, `Q4`, `Q6`, `Q8`: the one query, repeated;
 * - `Q3 first`, `Q5 first`: every run the next needle of a list of a few hundred common ones
 *   (cycled), and our engine re-created (empty caches) — the first-request latency;
 * - `Q3 repeat`, `Q5 repeat`: a few needles, each asked again and again;
 * - `Q7 block 0`, `Q7 blocks 1-9`: sessions of 10 blocks, each session a new needle (and a new
 *   engine of ours); the first block and the following ones are reported apart.
 */
import type { BenchPredicate as Predicate, BenchQueryShape as Query, SortKey } from "./query-model.ts";
import type { ColumnId } from "./query-model.ts";
import { type DatasetStats, type Needles, shuffle } from "./datasets.ts";

/** The query classes. */
export const QUERY_CLASSES = ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8"] as const;
export type QueryClass = (typeof QUERY_CLASSES)[number];

/** What each class asks, for tables. */
export const CLASS_TITLES: Record<QueryClass, string> = {
  Q1: "first page, sort name asc, 10 rows",
  Q2: "sort email desc, offset N/2, 100 rows",
  Q3: "email contains needle, sort id, 100 rows",
  Q4: "status=inactive, sort name desc, offset 10k, 100 rows",
  Q5: "status=active & name contains needle, sort email asc, offset 200",
  Q6: "no sort/filter, offset 0.9N, 100 rows",
  Q7: "AG Grid: 10 blocks of email contains needle, sort name asc",
  Q8: "sort status asc, name desc, offset N/2, 100 rows",
};

/** How a series is timed. */
export type SeriesKind = "fixed" | "first" | "repeat" | "session-first" | "session-rest";

/** One timed series. */
export interface Series {
  /** The record's `query`, e.g. "Q3 first". */
  name: string;
  cls: QueryClass;
  kind: SeriesKind;
}

/** Every series, in report order. */
export const SERIES: readonly Series[] = [
  { name: "Q1", cls: "Q1", kind: "fixed" },
  { name: "Q2", cls: "Q2", kind: "fixed" },
  { name: "Q3 first", cls: "Q3", kind: "first" },
  { name: "Q3 repeat", cls: "Q3", kind: "repeat" },
  { name: "Q4", cls: "Q4", kind: "fixed" },
  { name: "Q5 first", cls: "Q5", kind: "first" },
  { name: "Q5 repeat", cls: "Q5", kind: "repeat" },
  { name: "Q6", cls: "Q6", kind: "fixed" },
  { name: "Q7 block 0", cls: "Q7", kind: "session-first" },
  { name: "Q7 blocks 1-9", cls: "Q7", kind: "session-rest" },
  { name: "Q8", cls: "Q8", kind: "fixed" },
];

/** Blocks in one AG Grid session, and rows per block (AG Grid's cacheBlockSize). */
export const SESSION_BLOCKS = 10;
export const BLOCK_ROWS = 100;

/** Needles used by the checks and by the repeat series (the first few of each list). */
export const CHECK_NEEDLES = 3;
/** Needles cycled by the repeat series. */
export const REPEAT_NEEDLES = 3;

/** A query with a stable key (for the expected answers) and its class. */
export interface BenchQuery {
  key: string;
  cls: QueryClass;
  query: Query;
}

const asc = (column: ColumnId): SortKey => ({ column, direction: "asc", absolute: false });
const desc = (column: ColumnId): SortKey => ({ column, direction: "desc", absolute: false });
const contains = (column: "name" | "email", value: string): Predicate => ({ kind: "text", column, op: "contains", value });
/** Status codes: STATUS_VALUES order. */
const ACTIVE = 0;
const INACTIVE = 1;

/** Q4's offset: 10,000, clamped so that a full page still exists on small datasets. */
export function q4Offset(stats: DatasetStats): number {
  return Math.max(0, Math.min(10_000, stats.statusCounts[INACTIVE] - BLOCK_ROWS));
}

/** The one query of a fixed class (Q1, Q2, Q4, Q6, Q8). */
export function fixedQuery(cls: QueryClass, stats: DatasetStats): Query {
  const n = stats.rows;
  switch (cls) {
    case "Q1":
      return { filter: null, sort: [asc("name")], offset: 0, limit: 10 };
    case "Q2":
      return { filter: null, sort: [desc("email")], offset: Math.floor(n / 2), limit: 100 };
    case "Q4":
      return { filter: { kind: "status", codes: [INACTIVE] }, sort: [desc("name")], offset: q4Offset(stats), limit: 100 };
    case "Q6":
      return { filter: null, sort: [], offset: Math.floor(n * 0.9), limit: 100 };
    case "Q8":
      return { filter: null, sort: [asc("status"), desc("name")], offset: Math.floor(n / 2), limit: 100 };
    default:
      throw new Error(`${cls} is not a fixed query`);
  }
}

/** Q3: email contains `needle`, sort id, first 100 rows. */
export function q3(needle: string): Query {
  return { filter: contains("email", needle), sort: [asc("id")], offset: 0, limit: 100 };
}

/** Q5: status = active and name contains `needle`, sort email asc, offset 200, 100 rows. */
export function q5(needle: string): Query {
  return {
    filter: { kind: "and", children: [{ kind: "status", codes: [ACTIVE] }, contains("name", needle)] },
    sort: [asc("email")],
    offset: 200,
    limit: 100,
  };
}

/** Q7: block `block` of the AG Grid session over email contains `needle`, sort name asc. */
export function q7(needle: string, block: number): Query {
  return { filter: contains("email", needle), sort: [asc("name")], offset: block * BLOCK_ROWS, limit: BLOCK_ROWS };
}

/** Needle ranks (by frequency) each class draws from: Q7 the most frequent, so that a session has blocks to fetch. */
const NEEDLE_RANKS = { Q7: [0, 40], Q3: [40, 440], Q5: [0, 400] } as const;

/**
 * The needle list of a class: a band of the most frequent needles of its column (e-mail for Q3
 * and Q7, disjoint; name for Q5), in a seeded random order. The first {@link CHECK_NEEDLES} are
 * the checked (and repeated) ones; the first-request series cycle through the rest.
 */
export function needlesOf(cls: "Q3" | "Q5" | "Q7", needles: Needles): string[] {
  const [from, to] = NEEDLE_RANKS[cls];
  const list = cls === "Q5" ? needles.name : needles.email;
  return shuffle(list.slice(from, to), cls === "Q3" ? 3 : cls === "Q5" ? 5 : 7);
}

/** A needle list's needle for first-request run `run` (cycling; ours gets a new engine each run). */
export function freshNeedle(list: string[], run: number): string {
  const usable = list.length - CHECK_NEEDLES;
  if (usable <= 0) return list[run % list.length];
  return list[CHECK_NEEDLES + (run % usable)];
}

/** The queries every engine's answers are checked on against ours before any timing. */
export function checkQueries(stats: DatasetStats, needles: Needles): BenchQuery[] {
  const out: BenchQuery[] = [];
  for (const cls of ["Q1", "Q2", "Q4", "Q6", "Q8"] as const) out.push({ key: cls, cls, query: fixedQuery(cls, stats) });
  const q3Needles = needlesOf("Q3", needles).slice(0, CHECK_NEEDLES);
  for (const needle of q3Needles) out.push({ key: `Q3:${needle}`, cls: "Q3", query: q3(needle) });
  const q5Needles = needlesOf("Q5", needles).slice(0, CHECK_NEEDLES);
  for (const needle of q5Needles) out.push({ key: `Q5:${needle}`, cls: "Q5", query: q5(needle) });
  const q7Needle = needlesOf("Q7", needles)[0];
  for (let b = 0; b < SESSION_BLOCKS; b++) out.push({ key: `Q7:${q7Needle}:${b}`, cls: "Q7", query: q7(q7Needle, b) });
  return out;
}

/** A query in one line, for logs and mismatch reports. */
export function describeQuery(query: Query): string {
  const sort = query.sort.map((k) => `${k.column} ${k.direction}`).join(", ") || "(none)";
  return `filter ${JSON.stringify(query.filter)} sort ${sort} offset ${query.offset} limit ${query.limit}`;
}
