/**
 * The naive oracle of any table (docs/api.md "Any users table", "Ordering on any column",
 * "Filtering on any column", "Global search", "Facets"), at the level of the requests
 * themselves: an AG Grid body or a GET query string over plain records, answered with `filter`,
 * a comparator `sort` and `slice`. It shares nothing with the engine or the parsers but `fold`
 * and `collator` (the one matching and ordering rule) and the schema's types.
 */
import { collator, fold } from "../../src/collation/collation.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";

/** A record: every column's value by id (a missing field is null). */
export type TableRecord = Record<string, unknown>;

/** A table's columns (every one, in schema order) and which is the key. */
export interface Table {
  specs: readonly ColumnSpec[];
  key: string;
}

/** The spec of a column of the table. */
function specOf(table: Table, id: string): ColumnSpec {
  const spec = table.specs.find((s) => s.id === id);
  if (spec === undefined) throw new Error(`oracle: no column ${id}`);
  return spec;
}

/** Compares two keys: numbers numerically, strings by code point (docs/api.md "The key"). */
export function compareKeys(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  const x = String(a);
  const y = String(b);
  // code point order: compare as arrays of code points
  const xs = Array.from(x, (c) => c.codePointAt(0) as number);
  const ys = Array.from(y, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(xs.length, ys.length); i++) if (xs[i] !== ys[i]) return xs[i] - ys[i];
  return xs.length - ys.length;
}

const DAY = 86_400_000;

/** The value's output string, as text filters see it (numbers `String(n)`, date-times ISO UTC). */
export function outputString(spec: ColumnSpec, value: unknown): string {
  if (spec.kind === "datetime") return new Date(value as string).toISOString();
  return String(value);
}

/** The UTC day of a date or date-time value. */
function dayOf(spec: ColumnSpec, value: unknown): number {
  return Math.floor(Date.parse(spec.kind === "date" ? `${value}T00:00:00Z` : (value as string)) / DAY);
}

/** The UTC day of a request's date (`2024-03-01`, `2024-03-01 00:00:00`). */
function requestDay(text: string): number {
  return Math.floor(Date.parse(`${text.slice(0, 10)}T00:00:00Z`) / DAY);
}

const isNull = (v: unknown) => v === null || v === undefined;

/** AG Grid text condition on one value. */
function textMatches(spec: ColumnSpec, value: unknown, type: string, filter: string): boolean {
  if (isNull(value)) return type === "notEqual" || type === "notContains" || type === "blank";
  const cell = fold(outputString(spec, value));
  const needle = fold(filter);
  switch (type) {
    case "contains":
      return cell.includes(needle);
    case "notContains":
      return !cell.includes(needle);
    case "equals":
      return cell === needle;
    case "notEqual":
      return cell !== needle;
    case "startsWith":
      return cell.startsWith(needle);
    case "endsWith":
      return cell.endsWith(needle);
    case "blank":
      return outputString(spec, value).trim() === "";
    case "notBlank":
      return outputString(spec, value).trim() !== "";
  }
  throw new Error(`text type ${type}`);
}

/** One simple AG Grid model on one record's value. */
function modelMatches(spec: ColumnSpec, value: unknown, model: Record<string, unknown>): boolean {
  switch (model.filterType) {
    case "text":
      return textMatches(spec, value, (model.type as string) ?? "contains", String(model.filter ?? ""));
    case "number": {
      const type = (model.type as string) ?? "equals";
      if (type === "blank") return isNull(value);
      if (isNull(value)) return false;
      if (type === "notBlank") return true;
      const x = value as number;
      const f = Number(model.filter);
      switch (type) {
        case "equals":
          return x === f;
        case "notEqual":
          return x !== f;
        case "lessThan":
          return x < f;
        case "lessThanOrEqual":
          return x <= f;
        case "greaterThan":
          return x > f;
        case "greaterThanOrEqual":
          return x >= f;
        case "inRange":
          return f < x && x < Number(model.filterTo);
      }
      throw new Error(`number type ${type}`);
    }
    case "date": {
      const type = (model.type as string) ?? "equals";
      if (type === "blank") return isNull(value);
      if (isNull(value)) return false;
      if (type === "notBlank") return true;
      const day = dayOf(spec, value);
      const from = requestDay(model.dateFrom as string);
      switch (type) {
        case "equals":
          return day === from;
        case "notEqual":
          return day !== from;
        case "lessThan":
          return day < from;
        case "greaterThan":
          return day > from;
        case "inRange":
          return from < day && day < requestDay(model.dateTo as string);
      }
      throw new Error(`date type ${type}`);
    }
    case "set": {
      const values = model.values as unknown[];
      if (isNull(value)) return values.includes(null);
      if (spec.kind === "text" && values.includes(null) && (value as string).trim() === "") return true;
      return values.some((v) => v !== null && (spec.kind === "number" ? Number(v) === value : fold(String(v)) === fold(outputString(spec, value))));
    }
  }
  throw new Error(`filterType ${model.filterType}`);
}

/** A column's model (simple or combined with AND / OR) on one record. */
function columnMatches(spec: ColumnSpec, value: unknown, model: Record<string, unknown>): boolean {
  if (Array.isArray(model.conditions)) {
    const results = (model.conditions as Record<string, unknown>[]).map((c) => modelMatches(spec, value, c));
    return model.operator === "AND" ? results.every(Boolean) : results.some(Boolean);
  }
  return modelMatches(spec, value, model);
}

/** Compares two non-null values of a column in its kind's order. */
function compareValues(spec: ColumnSpec, a: unknown, b: unknown): number {
  switch (spec.kind) {
    case "number":
      return (a as number) - (b as number);
    case "date":
    case "datetime":
      return Date.parse(spec.kind === "date" ? `${a}T00:00:00Z` : (a as string)) - Date.parse(spec.kind === "date" ? `${b}T00:00:00Z` : (b as string));
    case "boolean":
      return Number(a) - Number(b);
    case "enum":
      return (spec.values ?? []).indexOf(a as string) - (spec.values ?? []).indexOf(b as string);
    default:
      return collator.compare(a as string, b as string);
  }
}

/** An AG Grid sort key: `type: "absolute"` orders a number column by |value| then value. */
export type OracleSortKey = { colId: string; sort: "asc" | "desc"; type?: "default" | "absolute" };

/**
 * The records matching `keep`, sorted by `sortModel` (nulls first ascending, a descending key
 * the exact reverse, a text key by code point, ties by the key in the direction of the last key).
 */
function answer(records: readonly TableRecord[], table: Table, keep: (r: TableRecord) => boolean, sortModel: readonly OracleSortKey[]): TableRecord[] {
  const matching = records.filter(keep);
  // keys after the key column cannot change the order: the key is unique
  return matching.sort((a, b) => {
    for (const key of sortModel) {
      const spec = specOf(table, key.colId);
      const x = a[key.colId];
      const y = b[key.colId];
      let d: number;
      if (isNull(x) || isNull(y)) d = isNull(x) ? (isNull(y) ? 0 : -1) : 1;
      else if (key.type === "absolute" && spec.kind === "number") d = Math.abs(x as number) - Math.abs(y as number) || (x as number) - (y as number);
      else if (key.colId === table.key) d = compareKeys(x, y);
      else d = compareValues(spec, x, y);
      if (d !== 0) return key.sort === "asc" ? d : -d;
      if (key.colId === table.key) break;
    }
    const last = sortModel[sortModel.length - 1];
    const byKey = compareKeys(a[table.key], b[table.key]);
    return last !== undefined && last.sort === "desc" ? -byKey : byKey;
  });
}

/** An AG Grid body as the oracle reads it. */
export interface OracleBody {
  sortModel: readonly OracleSortKey[];
  filterModel: Record<string, Record<string, unknown>>;
  quickFilter?: string;
}

/** The oracle's answer to an AG Grid body: the window's keys and the total. */
export function oraclePost(records: readonly TableRecord[], table: Table, body: OracleBody & { startRow: number; endRow: number }): { keys: unknown[]; total: number } {
  const sorted = oracleRows(records, table, body);
  return { keys: sorted.slice(body.startRow, body.endRow).map((r) => r[table.key]), total: sorted.length };
}

/** True when a record passes an AG Grid filter model (columns ANDed) and quick filter. */
function passes(table: Table, r: TableRecord, body: OracleBody, except: string | null = null): boolean {
  return Object.entries(body.filterModel).every(([id, model]) => id === except || columnMatches(specOf(table, id), r[id], model)) && searchMatches(table, r, body.quickFilter ?? "");
}

/** Every record matching an AG Grid filter model and quick filter, in the sort model's order (what an export holds). */
export function oracleRows(records: readonly TableRecord[], table: Table, body: OracleBody): TableRecord[] {
  return answer(records, table, (r) => passes(table, r, body), body.sortModel);
}

/**
 * The global search on one record (docs/api.md "Global search"): the text split on white space;
 * every term, folded, is contained in the folded output string of the key or a non-null `text`
 * or `enum` value. No term: every record.
 */
export function searchMatches(table: Table, record: TableRecord, text: string): boolean {
  const terms = text.split(/\s+/u).filter((t) => t !== "");
  if (terms.length === 0) return true;
  const cells: string[] = [];
  for (const spec of table.specs) {
    const value = record[spec.id];
    if (isNull(value)) continue;
    if (spec.id === table.key || spec.kind === "text" || spec.kind === "enum") cells.push(outputString(spec, value));
  }
  const folded = cells.map(fold);
  return terms.every((term) => folded.some((cell) => cell.includes(fold(term))));
}

/** One facet as the oracle computes it (docs/api.md "Facets"). */
export type OracleFacet =
  | { kind: string; values: { value: unknown; count: number }[]; distinct: number; nulls: number }
  | { kind: string; min: unknown; max: unknown; nulls: number };

/**
 * The facets of a request: per column, over the records matching every column filter but the
 * column's own, and the quick filter. Values of enum, boolean and text columns: grouped as the
 * ordering groups them (text: collator-equal values are one value, shown as written in the
 * group's record of lowest id among all records), counted, kept when their folded string contains
 * the folded `search`, count descending then value order, the first `limit`. Number, date and
 * datetime: the smallest and largest non-null value.
 */
export function oracleFacets(
  records: readonly TableRecord[],
  table: Table,
  body: { columns: string[]; filterModel: Record<string, Record<string, unknown>>; quickFilter?: string; limit?: number; search?: string },
): { facets: Record<string, OracleFacet>; total: number } {
  const matching = (except: string | null) => records.filter((r) => passes(table, r, { sortModel: [], filterModel: body.filterModel, quickFilter: body.quickFilter }, except));
  const facets: Record<string, OracleFacet> = {};
  const limit = body.limit ?? 20;
  const needle = body.search === undefined ? "" : fold(body.search);
  for (const column of body.columns) {
    const spec = specOf(table, column);
    const rows = matching(column);
    const nulls = rows.filter((r) => isNull(r[column])).length;
    const present = rows.filter((r) => !isNull(r[column]));
    if (spec.kind === "number" || spec.kind === "date" || spec.kind === "datetime") {
      const sorted = [...present].sort((a, b) => compareValues(spec, a[column], b[column]));
      const out = (v: unknown) => (spec.kind === "datetime" && typeof v === "string" ? new Date(v).toISOString() : v);
      facets[column] = { kind: spec.kind, min: sorted.length === 0 ? null : out(sorted[0][column]), max: sorted.length === 0 ? null : out(sorted[sorted.length - 1][column]), nulls };
      continue;
    }
    // groups: the shown value of each group (text: collator-equal values are one group, shown as
    // the value of the group's lowest-id record among all records)
    const shownOf = new Map<unknown, unknown>();
    if (spec.kind === "text" && column === table.key) {
      // every key is its own value (count 1): in key order
      const keys = rows.map((r) => r[column] as string).filter((v) => fold(v).includes(needle)).sort(compareKeys);
      facets[column] = { kind: "text", values: keys.slice(0, limit).map((value) => ({ value, count: 1 })), distinct: keys.length, nulls: 0 };
      continue;
    }
    if (spec.kind === "text") {
      const distinctValues = [...new Set(records.filter((r) => !isNull(r[column])).map((r) => r[column] as string))].sort(collator.compare);
      const group = new Map<string, number>();
      distinctValues.forEach((v, i) => group.set(v, i > 0 && collator.compare(distinctValues[i - 1], v) === 0 ? (group.get(distinctValues[i - 1]) as number) : i));
      const first = new Map<number, string>();
      for (const r of [...records].sort((a, b) => compareKeys(a[table.key], b[table.key]))) {
        if (isNull(r[column])) continue;
        const g = group.get(r[column] as string) as number;
        if (!first.has(g)) first.set(g, r[column] as string);
      }
      for (const v of distinctValues) shownOf.set(v, first.get(group.get(v) as number));
    }
    const shown = (v: unknown): unknown => (spec.kind === "text" ? shownOf.get(v) : v);
    const counts = new Map<unknown, number>();
    for (const r of present) {
      const key = shown(r[column]);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const entries = [...counts].filter(([value]) => fold(String(value)).includes(needle));
    entries.sort((a, b) => b[1] - a[1] || compareValues(spec, a[0], b[0]));
    facets[column] = { kind: spec.kind, values: entries.slice(0, limit).map(([value, count]) => ({ value, count })), distinct: entries.length, nulls };
  }
  return { facets, total: matching(null).length };
}

/**
 * A GET `filter[col]` value on one record (docs/api.md "Filtering on any column", "The key"):
 * number, date, datetime `v` or `lo,hi` inclusive (a date-only value or bound covering its whole
 * UTC day); enum and boolean comma lists of whole values, folded; text a substring, but a text
 * key a comma list of whole values, folded.
 */
function getMatches(spec: ColumnSpec, value: unknown, filter: string, key: boolean): boolean {
  if (spec.kind === "text" && key) return filter.split(",").some((v) => v.trim() !== "" && fold(v.trim()) === fold(value as string));
  if (spec.kind === "text") return !isNull(value) && fold(value as string).includes(fold(filter));
  if (spec.kind === "enum" || spec.kind === "boolean") {
    return !isNull(value) && filter.split(",").some((v) => v.trim() !== "" && fold(v.trim()) === fold(String(value)));
  }
  if (isNull(value)) return false;
  const parts = filter.split(",").map((p) => p.trim());
  // [start, end] of a bound: a number or date-time its value; a date-only value its whole UTC day
  const bound = (text: string): [number, number] => {
    if (spec.kind === "number") return [Number(text), Number(text)];
    if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
      const d = requestDay(text);
      return spec.kind === "date" ? [d, d] : [d * DAY, (d + 1) * DAY - 1];
    }
    const ms = Date.parse(text);
    return spec.kind === "date" ? [Math.floor(ms / DAY), Math.floor(ms / DAY)] : [ms, ms];
  };
  const x = spec.kind === "number" ? (value as number) : spec.kind === "date" ? dayOf(spec, value) : Date.parse(value as string);
  if (parts.length === 1) {
    const [lo, hi] = bound(parts[0]);
    return lo <= x && x <= hi;
  }
  const lo = parts[0] === "" ? Number.NEGATIVE_INFINITY : bound(parts[0])[0];
  const hi = parts[1] === "" ? Number.POSITIVE_INFINITY : bound(parts[1])[1];
  return lo <= x && x <= hi;
}

/** The oracle's answer to a GET: `filters` by column, the search `q`, one sort key, a page. */
export function oracleGet(
  records: readonly TableRecord[],
  table: Table,
  request: { filters: Record<string, string>; q?: string; sortBy?: string; sortOrder: "asc" | "desc"; page: number; pageSize: number },
): { keys: unknown[]; total: number } {
  const keep = (r: TableRecord) =>
    Object.entries(request.filters).every(([id, f]) => {
      const parts = f.split(",");
      // "," alone is no filter on the range kinds
      if (parts.length === 2 && parts[0].trim() === "" && parts[1].trim() === "" && ["number", "date", "datetime"].includes(specOf(table, id).kind)) return true;
      return getMatches(specOf(table, id), r[id], f, id === table.key);
    }) && searchMatches(table, r, request.q ?? "");
  const sorted = answer(records, table, keep, request.sortBy === undefined ? [] : [{ colId: request.sortBy, sort: request.sortOrder }]);
  const from = (request.page - 1) * request.pageSize;
  return { keys: sorted.slice(from, from + request.pageSize).map((r) => r[table.key]), total: sorted.length };
}
