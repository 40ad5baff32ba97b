/**
 * The naive test oracle for the query engine on generated-user-shaped data (the default data's
 * four columns: `id` the number key, `name` and `email` text, `status` an enum): docs/api.md
 * ("Ordering", "Matching") and the documented semantics of `Query` / `Predicate` / `ColumnTest`
 * / `SortKey` (src/query/types.ts, src/kinds/kind.ts), written out as plainly as possible with
 * `filter`, a comparator `sort` and `slice`, at the level of the normalized query.
 *
 * It shares nothing with the engine but `collator` / `fold` (the one ordering rule and the one
 * matching rule) and the types. Property tests run the engine and this oracle on the same random
 * records and queries and expect identical answers (test/support/table-oracle.ts checks the same
 * at the level of the requests, on tables of any shape).
 */
import { collator, fold } from "../../src/collation/collation.ts";
import type { ColumnTest, Predicate, Query, SortKey } from "../../src/query/types.ts";
import type { UserRecord } from "../../src/generate/record.ts";

/** The generated users' columns. */
export type ColumnId = "id" | "name" | "email" | "status";

/**
 * Answers `query` over `records` the slow, obvious way.
 *
 * 1. Filter: keep the records for which {@link naiveMatches} holds (all when `filter` is null).
 * 2. Sort: by each sort key in turn ({@link naiveCompare}); rows still tied after the last key
 *    by `id`, ascending when the last key is ascending and descending when it is descending;
 *    `id` ascending when there are no keys (docs/api.md "Ordering"; types.ts `SortKey`).
 * 3. Window: `slice(offset, offset + limit)` (types.ts `Query`).
 *
 * @returns `rows`: the window, as the input record objects (not copies), in order;
 *   `total`: the number of matching records (before the window), as docs/api.md's `total`.
 */
export function naiveQuery(
  records: readonly UserRecord[],
  query: Query,
): { rows: UserRecord[]; total: number } {
  const filter = query.filter;
  const matching = records.filter((record) => filter === null || naiveMatches(record, filter));
  const sorted = [...matching].sort((a, b) => naiveCompare(a, b, query.sort));
  return { rows: sorted.slice(query.offset, query.offset + query.limit), total: matching.length };
}

/**
 * True when `record` satisfies `predicate` (types.ts `Predicate`; docs/api.md "Matching").
 *
 * A `column` leaf's test (kind.ts `ColumnTest`):
 * - `text`: `fold(cell)` against `fold(value)`, where the cell is the name / email, `String(id)`
 *   for `id`, the enum value for `status`: contains = includes, notContains = !includes,
 *   equals ===, notEqual !==, startsWith, endsWith; `blank` = the cell is empty or white space
 *   only (`cell.trim() === ""` on the stored value, AG Grid's `isBlank`), `notBlank` = it is not
 *   (`value` ignored).
 * - `range` (on `id`): lo ≤ id ≤ hi, an open end exclusive; `negate` the ids outside.
 * - `null`: no generated user has a null: nothing, or everything when negated.
 * - `set`: the cell, folded (`String(id)` for `id`), is one of the values (already folded by the
 *   parser); with `nulls`, a blank name or email matches too. An empty list matches nothing.
 * - `search`: every term, folded, is in `String(id)`, the name, the email or the status, folded.
 * - `and` / `or`: every / some child.
 */
export function naiveMatches(record: UserRecord, predicate: Predicate): boolean {
  switch (predicate.kind) {
    case "column":
      return matchesTest(record, predicate.column as ColumnId, predicate.test);
    case "search":
      return predicate.terms.every((term) => (["id", "name", "email", "status"] as const).some((c) => fold(cellString(record, c)).includes(fold(term))));
    case "and":
      return predicate.children.every((child) => naiveMatches(record, child));
    case "or":
      return predicate.children.some((child) => naiveMatches(record, child));
  }
}

/** One column test on one record (see {@link naiveMatches}). */
function matchesTest(record: UserRecord, column: ColumnId, test: ColumnTest): boolean {
  switch (test.op) {
    case "text":
      return matchesText(cellString(record, column), test.type, test.value);
    case "range": {
      if (column !== "id") throw new Error(`oracle: a range test on ${column}`);
      const x = record.id;
      const inside = (test.loOpen ? x > test.lo : x >= test.lo) && (test.hiOpen ? x < test.hi : x <= test.hi);
      return inside !== test.negate;
    }
    case "null":
      return test.negate;
    case "set": {
      const cell = fold(cellString(record, column));
      if (test.values.includes(cell)) return true;
      return test.nulls && (column === "name" || column === "email") && cellString(record, column).trim() === "";
    }
  }
}

/**
 * Compares two records by `sort` (types.ts `SortKey`; docs/api.md "Ordering").
 *
 * Per key: `name` / `email` by `collator.compare`; `status` by its enum value string with
 * `collator.compare` (active < inactive); `id` numerically, or with `absolute` by `Math.abs(id)`
 * then between `x` and `-x` by signed id, the whole key reversed for `desc` (types.ts `SortKey`). `absolute` is ignored on every
 * column but `id`. A `desc` key negates its comparison.
 * After all keys: `id` ascending, or descending when the last key is descending.
 *
 * @returns negative when `a` comes first, positive when `b` does; 0 only for the same id.
 */
export function naiveCompare(a: UserRecord, b: UserRecord, sort: readonly SortKey[]): number {
  for (const key of sort) {
    if (key.column === "id" && key.absolute) {
      const byMagnitude = compareNumbers(Math.abs(a.id), Math.abs(b.id));
      if (byMagnitude !== 0) return key.direction === "asc" ? byMagnitude : -byMagnitude;
      const bySigned = compareNumbers(a.id, b.id);
      if (bySigned !== 0) return key.direction === "asc" ? bySigned : -bySigned;
      continue;
    }
    const byKey = compareColumn(a, b, key.column as ColumnId);
    if (byKey !== 0) return key.direction === "asc" ? byKey : -byKey;
  }
  const last = sort[sort.length - 1];
  const byId = compareNumbers(a.id, b.id);
  return last !== undefined && last.direction === "desc" ? -byId : byId;
}

/** The cell of `column` as a string, as text filters see it (types.ts `Predicate`, `text`). */
function cellString(record: UserRecord, column: ColumnId): string {
  switch (column) {
    case "id":
      return String(record.id);
    case "name":
      return record.name;
    case "email":
      return record.email;
    case "status":
      return record.status;
  }
}

/** One text filter on one cell (docs/api.md "Matching"). */
function matchesText(cell: string, op: string, value: string): boolean {
  const folded = fold(cell);
  const needle = fold(value);
  switch (op) {
    case "contains":
      return folded.includes(needle);
    case "notContains":
      return !folded.includes(needle);
    case "equals":
      return folded === needle;
    case "notEqual":
      return folded !== needle;
    case "startsWith":
      return folded.startsWith(needle);
    case "endsWith":
      return folded.endsWith(needle);
    case "blank":
      return cell.trim() === "";
    case "notBlank":
      return cell.trim() !== "";
  }
  throw new Error(`oracle: unknown text op ${op}`);
}

/** One column's ascending order (docs/api.md "Ordering"): strings and status by the collator, id by value. */
function compareColumn(a: UserRecord, b: UserRecord, column: ColumnId): number {
  switch (column) {
    case "id":
      return compareNumbers(a.id, b.id);
    case "name":
      return collator.compare(a.name, b.name);
    case "email":
      return collator.compare(a.email, b.email);
    case "status":
      return collator.compare(a.status, b.status);
  }
}

/** Plain numeric comparison: negative, 0 or positive. */
function compareNumbers(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
