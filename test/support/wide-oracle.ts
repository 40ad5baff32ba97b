/**
 * The naive oracle for columns beyond the seed's four (docs/api.md "Columns beyond the four",
 * "Ordering on any column", "Filtering on any column"), at the level of the requests themselves:
 * an AG Grid body or a GET query string over plain records, answered with `filter`, a
 * comparator `sort` and `slice`. It shares nothing with the engine or the parsers but `fold` and
 * `collator` (the one matching and ordering rule) and the schema's types.
 */
import { collator, fold } from "../../src/collation/collation.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import type { WideRecord } from "./wide-store.ts";

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

/** The seed columns' specs, for sorting by them too. */
const SEED: Record<string, ColumnSpec> = {
  id: { id: "id", kind: "number" },
  name: { id: "name", kind: "text" },
  email: { id: "email", kind: "text" },
  status: { id: "status", kind: "enum", values: ["active", "inactive"] },
};

/**
 * The records matching `filterModel` (columns ANDed; the four seed columns take a `set` on
 * status or a text model on name), sorted by `sortModel` (nulls first ascending, a descending
 * key the exact reverse, ties by id in the direction of the last key).
 */
function answer(records: readonly WideRecord[], specs: readonly ColumnSpec[], keep: (r: WideRecord) => boolean, sortModel: { colId: string; sort: "asc" | "desc" }[]): WideRecord[] {
  const specOf = (id: string) => SEED[id] ?? (specs.find((s) => s.id === id) as ColumnSpec);
  const matching = records.filter(keep);
  return matching.sort((a, b) => {
    for (const key of sortModel) {
      const spec = specOf(key.colId);
      const x = a[key.colId];
      const y = b[key.colId];
      const d = isNull(x) ? (isNull(y) ? 0 : -1) : isNull(y) ? 1 : compareValues(spec, x, y);
      if (d !== 0) return key.sort === "asc" ? d : -d;
    }
    const last = sortModel[sortModel.length - 1];
    return last !== undefined && last.sort === "desc" ? b.id - a.id : a.id - b.id;
  });
}

/** The oracle's answer to an AG Grid body: the window's ids and the total. */
export function oraclePost(
  records: readonly WideRecord[],
  specs: readonly ColumnSpec[],
  body: { startRow: number; endRow: number; sortModel: { colId: string; sort: "asc" | "desc" }[]; filterModel: Record<string, Record<string, unknown>> },
): { ids: number[]; total: number } {
  const specOf = (id: string) => SEED[id] ?? (specs.find((s) => s.id === id) as ColumnSpec);
  const keep = (r: WideRecord) => Object.entries(body.filterModel).every(([id, model]) => columnMatches(specOf(id), r[id], model));
  const sorted = answer(records, specs, keep, body.sortModel);
  return { ids: sorted.slice(body.startRow, body.endRow).map((r) => r.id), total: sorted.length };
}

/**
 * A GET `filter[col]` value on one record (docs/api.md "Filtering on any column"): number, date,
 * datetime `v` or `lo,hi` inclusive (a date-only value or bound covering its whole UTC day);
 * enum and boolean comma lists of whole values, folded; text a substring.
 */
function getMatches(spec: ColumnSpec, value: unknown, filter: string): boolean {
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

/** The oracle's answer to a GET: `filters` by column, one sort key, a page. */
export function oracleGet(
  records: readonly WideRecord[],
  specs: readonly ColumnSpec[],
  request: { filters: Record<string, string>; sortBy?: string; sortOrder: "asc" | "desc"; page: number; pageSize: number },
): { ids: number[]; total: number } {
  const specOf = (id: string) => SEED[id] ?? (specs.find((s) => s.id === id) as ColumnSpec);
  const keep = (r: WideRecord) =>
    Object.entries(request.filters).every(([id, f]) => {
      const parts = f.split(",");
      // "," alone is no filter on the range kinds
      if (parts.length === 2 && parts[0].trim() === "" && parts[1].trim() === "" && ["number", "date", "datetime"].includes(specOf(id).kind)) return true;
      return getMatches(specOf(id), r[id], f);
    });
  const sorted = answer(records, specs, keep, request.sortBy === undefined ? [] : [{ colId: request.sortBy, sort: request.sortOrder }]);
  const from = (request.page - 1) * request.pageSize;
  return { ids: sorted.slice(from, from + request.pageSize).map((r) => r.id), total: sorted.length };
}
