/**
 * Facets over a live replica's rows (docs/api.md "Facets"; docs/live-replicas.md §4): the same
 * answer a fresh snapshot of the same rows gives. Counts are the base's over B (facets.ts, as
 * without changes), less the tombstoned rows of B (a few, counted by value), plus the matching
 * changed rows by value; a value only the changes hold is listed between the base's values
 * around it. A listed text value is shown as the live row with the smallest key among those
 * holding it shows it (the row a fresh snapshot's order puts first). Ranges walk the base's value
 * order from either end to the first live member, then take the changed rows' values into account.
 */
import { hasRow } from "../bits/bitmap.ts";
import { bytesMatch } from "../bits/folded-match.ts";
import { sortedHas } from "../bits/sorted-rows.ts";
import { collator, fold } from "../collation/collation.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import { firstAtLeast } from "../kinds/ordered-column.ts";
import { KINDS } from "../kinds/registry.ts";
import type { DeltaColumn, DeltaVersion } from "../live/delta.ts";
import { baseText, deltaRanks, deltaRowDead } from "../live/delta.ts";
import { withinScope, withoutColumn } from "../query/columns.ts";
import type { FacetQuery } from "../query/facets.ts";
import type { ColumnKind } from "../schema/kinds.ts";
import { type Store, storedColumn } from "../store/types.ts";
import { type Engine, liveFilter } from "./execute.ts";
import type { Predicate } from "../query/types.ts";
import type { Work } from "../bits/work.ts";
import type { FilterResult } from "./row-set.ts";
import { type Facet, type FacetsAnswer, TopCounts, codedCounts, codedListing, forEachMember, membersOf, partitionCountsOf, textCounts, textView, valueExtent } from "./facets.ts";
import { type LiveFilter, baseHas, deadRowsOf } from "./live-rows.ts";
import { liveComparator } from "./live-order.ts";

const encoder = new TextEncoder();

/**
 * Answers a facets request over the engine's live rows (see the module comment), one column at a
 * time (pausing between them), from the base's results of its filters (facets.ts `facetsWork`).
 * @param resultOf the base's rows of each filter the request reads (by predicate)
 */
export function* computeLiveFacets(engine: Engine & { live: DeltaVersion }, query: FacetQuery, resultOf: (filter: Predicate | null) => FilterResult): Work<FacetsAnswer> {
  const whole = withinScope(query.scope, query.filter);
  const total = liveFilter(engine, whole, resultOf(whole)).total;
  const needle = query.search === null || query.search === "" ? null : fold(query.search);
  // a listed text value is shown as a live row of the scope writes it (the rows outside it are not the client's)
  let inScope: ((row: number) => boolean) | null = null;
  if (query.scope !== null && query.scope !== undefined) {
    const scope = liveFilter(engine, query.scope, resultOf(query.scope));
    const n = engine.store.rowCount;
    inScope = (row) => (row >= n ? sortedHas(scope.delta, row) : baseHas(engine.store, scope.base, row));
  }
  const facets: Record<string, Facet> = {};
  for (const column of query.columns) {
    const filter = withinScope(query.scope, withoutColumn(query.filter, column));
    const live = liveFilter(engine, filter, resultOf(filter));
    facets[column] = liveFacetOf(engine.live, column, live, query.limit, needle, inScope);
    yield;
  }
  return { facets, total };
}

/** One column's facet over a filter's live rows; `inScope`: the rows a text value may be shown from (null: any). */
function liveFacetOf(version: DeltaVersion, id: string, live: LiveFilter, limit: number, needle: string | null, inScope: ((row: number) => boolean) | null): Facet {
  const store = version.delta.base;
  const column = storedColumn(store, id);
  const delta = version.delta.columns.get(id) as DeltaColumn;
  const kind = column.spec.kind;
  const n = store.rowCount;
  // the kind's facet shape (src/kinds: `facet`) and the column's role say how it is counted
  const shape = KINDS[kind].facet;
  if (shape === "codes") {
    const partitioned = store.partition !== null && store.partition.column === id;
    const counts = partitioned ? partitionCountsOf(store, live.base) : codedCounts(store, column, membersOf(store, live.base));
    const rankOf = partitioned ? (store.partition?.codes as Uint8Array) : (column.rankByRow as Uint32Array);
    for (const row of deadRowsOf(version, live)) counts[rankOf[row]]--;
    const distinct = column.distinct as Float64Array;
    const extra = new Map<number, number>();
    for (const row of live.delta) {
      const x = (delta.doubles as Float64Array)[row - n];
      if (Number.isNaN(x)) {
        counts[0]++;
        continue;
      }
      const i = firstAtLeast(distinct, x, false);
      if (i < distinct.length && distinct[i] === x) counts[i + 1]++;
      else extra.set(x, (extra.get(x) ?? 0) + 1);
    }
    return codedListing(column, counts, limit, needle, extra);
  }
  if (shape === "values") return column.key ? keyTextFacet(version, column, delta, live, limit, needle) : textFacet(version, column, delta, live, limit, needle, inScope);
  if (shape === "range") {
    const extent = valueExtent(store, column, membersOf(store, live.base), version.baseDead);
    let { min, max, nulls } = extent;
    for (const row of live.delta) {
      const x = (delta.doubles as Float64Array)[row - n];
      if (Number.isNaN(x)) nulls++;
      else {
        if (Number.isNaN(min) || x < min) min = x;
        if (Number.isNaN(max) || x > max) max = x;
      }
    }
    const valueJson = KINDS[kind].valueJson as NonNullable<(typeof KINDS)["number"]["valueJson"]>;
    const show = (x: number) => (Number.isNaN(x) ? null : (JSON.parse(valueJson(column.spec, x)) as number | string));
    return { kind: kind as Extract<ColumnKind, "number" | "date" | "datetime">, min: show(min), max: show(max), nulls };
  }
  throw new Error(`internal: no facet for column "${id}" of kind ${kind}`);
}

/**
 * A text facet over live rows: the base's counts per rank (less the dead rows), the changed rows
 * of an even rank² counted with that rank, those of an odd rank² grouped by value (collator
 * equality) between the base's ranks.
 */
function textFacet(version: DeltaVersion, column: StoredColumn, delta: DeltaColumn, live: LiveFilter, limit: number, needle: string | null, inScope: ((row: number) => boolean) | null): Facet {
  const store = version.delta.base;
  const n = store.rowCount;
  const view = textView(column);
  const ranks = view.starts.length - 1;
  const { dense, sparse, nulls: baseNulls } = textCounts(store, view, membersOf(store, live.base));
  const counts = new Map<number, number>();
  const add = (rank: number, count: number) => counts.set(rank, (counts.get(rank) ?? 0) + count);
  if (sparse !== null) for (const [rank, count] of sparse) add(rank, count);
  let nulls = baseNulls;
  for (const row of deadRowsOf(version, live)) {
    const rank = view.rankByRow[row];
    if (rank === 0) nulls--;
    else add(rank, -1);
  }
  const rank2 = deltaRanks(version.delta, delta, version.rows) as Float64Array;
  const strings = delta.strings as (string | null)[];
  // odd rank²: groups of collator-equal values, keyed by rank² and a representative value
  const groups = new Map<number, { value: string; count: number }[]>();
  for (const row of live.delta) {
    const d = row - n;
    const r2 = rank2[d];
    if (r2 === 0) nulls++;
    else if (r2 % 2 === 0) add(r2 / 2, 1);
    else {
      const value = strings[d] as string;
      let list = groups.get(r2);
      if (list === undefined) groups.set(r2, (list = []));
      const group = list.find((g) => collator.compare(g.value, value) === 0);
      if (group === undefined) list.push({ value, count: 1 });
      else group.count++;
    }
  }
  // every live changed row by rank² (matching or not: a shown value is any live row's, of the scope when there is one)
  const compare = liveComparator(version, []);
  const byRank2 = new Map<number, number[]>();
  for (let d = 0; d < version.rows; d++) {
    if (deltaRowDead(version, d) || rank2[d] === 0 || (inScope !== null && !inScope(n + d))) continue;
    const list = byRank2.get(rank2[d]);
    if (list === undefined) byRank2.set(rank2[d], [n + d]);
    else list.push(n + d);
  }
  // the row shown for a base rank: its first live row by key, base or changed
  const shownRow = (rank: number): number => {
    let best = -1;
    for (let i = view.starts[rank]; i < view.starts[rank + 1]; i++) {
      const row = view.rowsByValue[i];
      if (!hasRow(version.baseDead, row) && (inScope === null || inScope(row))) {
        best = row;
        break;
      }
    }
    for (const row of byRank2.get(2 * rank) ?? []) if (best < 0 || compare(row, best) < 0) best = row;
    return best;
  };
  const needleBytes = needle === null ? null : encoder.encode(needle);
  const foldedOf = (row: number): string | Uint8Array => (row >= n ? (delta.folded as string[])[row - n] : view.folded.subarray(view.foldedOffsets[row], view.foldedOffsets[row + 1]));
  const holds = (row: number) => {
    if (needleBytes === null || needle === null) return true;
    const folded = foldedOf(row);
    return typeof folded === "string" ? folded.includes(needle) : bytesMatch(folded, 0, folded.length, "contains", needleBytes);
  };
  const top = new TopCounts(limit);
  const shown = new Map<number, number>();
  const offerRank = (rank: number, count: number) => {
    if (count <= 0) return;
    const row = shownRow(rank);
    if (row < 0 || !holds(row)) return;
    shown.set(2 * rank, row);
    top.offer(2 * rank, count);
  };
  if (sparse !== null || dense !== null) {
    if (dense !== null) for (let rank = 1; rank < ranks; rank++) offerRank(rank, dense[rank] + (counts.get(rank) ?? 0));
    else for (const [rank, count] of counts) if (rank >= 1) offerRank(rank, count);
  } else {
    // every base row a member: run lengths, corrected
    for (let rank = 1; rank < ranks; rank++) offerRank(rank, view.starts[rank + 1] - view.starts[rank] + (counts.get(rank) ?? 0));
  }
  // a group's shown value: its live changed row with the smallest key
  const groupOrder = new Map<number, string>();
  for (const [r2, list] of groups) {
    list.sort((a, b) => collator.compare(a.value, b.value));
    list.forEach((group, i) => {
      let best = -1;
      for (const row of byRank2.get(r2) ?? []) {
        if (collator.compare(strings[row - n] as string, group.value) !== 0) continue;
        if (best < 0 || compare(row, best) < 0) best = row;
      }
      const order = r2 + (i + 1) / (list.length + 1);
      if (needle !== null && !fold(strings[best - n] as string).includes(needle)) return;
      groupOrder.set(order, strings[best - n] as string);
      top.offer(order, group.count);
    });
  }
  const values = top.sorted().map(({ rank: order, count }) => {
    const row = shown.get(order);
    const value = row === undefined ? (groupOrder.get(order) as string) : row >= n ? (strings[row - n] as string) : (baseText(store, row, version.delta.columns.get(column.spec.id)?.position ?? 0) as string);
    return { value, count };
  });
  return { kind: "text", values, distinct: top.seen, nulls };
}

/**
 * A text key's facet over live rows: the first `limit` matching rows in key order whose folded
 * value holds the search, and how many hold it (docs/api.md "Facets": every value its own).
 */
function keyTextFacet(version: DeltaVersion, column: StoredColumn, delta: DeltaColumn, live: LiveFilter, limit: number, needle: string | null): Facet {
  const store = version.delta.base;
  const n = store.rowCount;
  const folded = column.folded as Uint8Array;
  const offsets = column.foldedOffsets as Uint32Array;
  const needleBytes = needle === null ? null : encoder.encode(needle);
  const compare = liveComparator(version, []);
  const extra = Array.from(live.delta).sort(compare);
  const listedRows: number[] = [];
  let distinct = 0;
  let x = 0;
  const holds = (row: number) =>
    needle === null ? true : row >= n ? (delta.folded as string[])[row - n].includes(needle) : bytesMatch(folded, offsets[row], offsets[row + 1], "contains", needleBytes as Uint8Array);
  const visit = (row: number) => {
    if (!holds(row)) return;
    distinct++;
    if (listedRows.length < limit) listedRows.push(row);
  };
  const members = membersOf(store, live.base);
  const visitBase = (row: number) => {
    if (hasRow(version.baseDead, row)) return;
    while (x < extra.length && compare(extra[x], row) < 0) visit(extra[x++]);
    visit(row);
  };
  if (members.all) for (let row = 0; row < n; row++) visitBase(row);
  else forEachMember(store, members, visitBase);
  while (x < extra.length) visit(extra[x++]);
  const position = version.delta.key.position;
  const values = listedRows.map((row) => ({ value: row >= n ? ((delta.strings as (string | null)[])[row - n] as string) : (baseText(store, row, position) as string), count: 1 }));
  return { kind: "text", values, distinct, nulls: 0 };
}
