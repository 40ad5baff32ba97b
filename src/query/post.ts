/**
 * Parses AG Grid Infinite Row Model request bodies (POST /api/users) into the normalized
 * query. Rules: docs/api.md "POST /api/users" and "The two real clients"; AG Grid's filter
 * model (text, number, set, combined) and sort model.
 */
import { STATUS_VALUES, statusCode } from "../schema.ts";
import { type ColumnSpec, SEED_SCHEMA, type Schema } from "../schema/kinds.ts";
import { MAX_FILTER_LENGTH, compileColumnModel, numberOf } from "../kinds/operators.ts";
import { KINDS } from "../kinds/registry.ts";
import type { SeedColumnId } from "./types.ts";
import { columnList, columnOf } from "./columns.ts";
import { searchPredicate } from "./search.ts";
import { type FieldError, ProblemError, fieldsProblem } from "./errors.ts";
import type { NumberOp, Predicate, Query, SortKey, TextOp } from "./types.ts";

/** Default row window when `endRow` is absent: AG Grid's block size (docs/api.md, cacheBlockSize). */
export const DEFAULT_BLOCK_SIZE = 100;

const TEXT_OPS: readonly TextOp[] = ["contains", "notContains", "equals", "notEqual", "startsWith", "endsWith", "blank", "notBlank"];
const NUMBER_OPS: readonly NumberOp[] = [
  "equals",
  "notEqual",
  "lessThan",
  "lessThanOrEqual",
  "greaterThan",
  "greaterThanOrEqual",
  "inRange",
  "blank",
  "notBlank",
];
/** Most conditions one column's combined filter model may hold (docs/api.md "HTTP envelope", limits). */
export const MAX_CONDITIONS_PER_COLUMN = 16;

/** Most predicates (simple filter models and conditions) one filter model may hold in all (docs/api.md, limits). */
export const MAX_PREDICATES = 64;

/** Server-Side Row Model fields that ask for grouping, pivoting or aggregation. */
const GROUPING_FIELDS = ["rowGroupCols", "groupKeys", "pivotCols", "valueCols"] as const;

/** What a POST route reads besides `filterModel` and `quickFilter` (docs/api.md: facets ignore the window and the sort, export the window). */
export interface PostParts {
  /** Read `startRow`/`endRow` (else ignored, and the query's window is every row). */
  window: boolean;
  /** Read `sortModel` (else ignored: no sort keys). */
  sort: boolean;
}

const ALL_PARTS: PostParts = { window: true, sort: true };

/** A parsed POST body: the query (offset = startRow, limit = endRow - startRow). */
export interface PostRequest {
  query: Query;
}

/** A value as JSON for an error message, cut to `max` characters: an error never echoes a large input. */
function shown(value: unknown, max = 80): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Escapes a JSON pointer token (RFC 6901). */
function token(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Parses a decoded JSON body.
 * @param maxPageSize the largest accepted window (`endRow - startRow`), in rows
 * @param schema the served snapshot's schema: the columns a sort or filter may name
 *   (docs/api.md "Columns beyond the four"); the seed's four by default
 * @throws ProblemError BAD_BODY listing every bad field by JSON pointer, or
 *   GROUPING_NOT_SERVED when the body asks for row grouping or pivoting
 */
export function parsePostBody(body: unknown, maxPageSize: number, schema: Schema = SEED_SCHEMA, parts: PostParts = ALL_PARTS): PostRequest {
  if (!isObject(body)) throw new ProblemError("BAD_BODY", "the body must be a JSON object", [{ pointer: "", detail: "must be a JSON object" }]);
  const grouping = GROUPING_FIELDS.filter((f) => Array.isArray(body[f]) && (body[f] as unknown[]).length > 0);
  if (body.pivotMode === true) grouping.push("pivotMode" as never);
  if (grouping.length > 0) {
    throw new ProblemError(
      "GROUPING_NOT_SERVED",
      `this endpoint serves the Infinite Row Model only; row grouping, pivoting and aggregation are not served (${grouping.join(", ")})`,
      grouping.map((f) => ({ pointer: `/${f}`, detail: "grouping, pivoting and aggregation are not served" })),
    );
  }
  const errors: FieldError[] = [];
  const bad = (pointer: string, detail: string) => errors.push({ pointer, detail });

  let startRow = 0;
  if (parts.window && body.startRow !== undefined && body.startRow !== null) {
    if (!Number.isSafeInteger(body.startRow) || (body.startRow as number) < 0) bad("/startRow", `must be an integer >= 0 (got ${shown(body.startRow)})`);
    else startRow = body.startRow as number;
  }
  let endRow = startRow + Math.min(DEFAULT_BLOCK_SIZE, maxPageSize);
  if (parts.window && body.endRow !== undefined && body.endRow !== null) {
    const e = body.endRow;
    if (!Number.isSafeInteger(e) || (e as number) < startRow) bad("/endRow", `must be an integer >= startRow (${startRow}) (got ${shown(e)})`);
    else if ((e as number) - startRow > maxPageSize) bad("/endRow", `endRow - startRow must be at most ${maxPageSize} rows (got ${(e as number) - startRow})`);
    else endRow = e as number;
  }

  const sort: SortKey[] = [];
  const sortModel = parts.sort ? body.sortModel : undefined;
  if (sortModel !== undefined && sortModel !== null) {
    if (!Array.isArray(sortModel)) bad("/sortModel", "must be an array of {colId, sort}");
    else {
      sortModel.forEach((item, i) => {
        const at = `/sortModel/${i}`;
        if (!isObject(item)) return bad(at, "must be an object {colId, sort, type?}");
        const spec = columnOf(schema, item.colId);
        if (spec === undefined) return bad(`${at}/colId`, `unknown column ${shown(item.colId)}; valid columns: ${columnList(schema)}`);
        if (!KINDS[spec.kind].sortable) return bad(`${at}/colId`, `column "${spec.id}" is ${spec.kind}: it is returned, never sorted`);
        if (item.sort !== "asc" && item.sort !== "desc") return bad(`${at}/sort`, `must be "asc" or "desc" (got ${shown(item.sort)})`);
        if (item.type !== undefined && item.type !== null && item.type !== "default" && item.type !== "absolute") {
          return bad(`${at}/type`, `must be "default" or "absolute" (got ${shown(item.type)})`);
        }
        sort.push({ column: spec.id, direction: item.sort, absolute: item.type === "absolute" });
      });
    }
  }

  let filter: Predicate | null = null;
  const filterModel = body.filterModel;
  if (filterModel !== undefined && filterModel !== null) {
    if (!isObject(filterModel)) bad("/filterModel", "must be an object mapping column ids to filter models");
    else {
      const children: Predicate[] = [];
      for (const [colId, model] of Object.entries(filterModel)) {
        const at = `/filterModel/${token(colId)}`;
        const spec = columnOf(schema, colId);
        if (spec === undefined) {
          bad(at, `unknown column ${shown(colId)}; valid columns: ${columnList(schema)}`);
          continue;
        }
        if (model === null || model === undefined) continue;
        const p = modelPredicate(spec, model, at, bad);
        if (p !== null) children.push(p);
      }
      filter = children.length === 0 ? null : children.length === 1 ? children[0] : { kind: "and", children };
      const predicates = filter === null ? 0 : countLeaves(filter);
      if (predicates > MAX_PREDICATES) bad("/filterModel", `holds ${predicates} predicates; at most ${MAX_PREDICATES} are accepted`);
    }
  }

  const quick = body.quickFilter;
  if (quick !== undefined && quick !== null) {
    const parsed = typeof quick === "string" ? searchPredicate(quick) : `must be a string (got ${shown(quick)})`;
    if (typeof parsed === "string") bad("/quickFilter", parsed);
    else if (parsed !== null) filter = filter === null ? parsed : { kind: "and", children: [filter, parsed] };
  }

  if (errors.length > 0) throw fieldsProblem("BAD_BODY", errors);
  if (!parts.window) return { query: { filter, sort, offset: 0, limit: Number.MAX_SAFE_INTEGER } };
  return { query: { filter, sort, offset: startRow, limit: endRow - startRow } };
}

type Bad = (pointer: string, detail: string) => void;

/** True for the seed's four, whose models compile to the seed's own predicates. */
function isSeed(spec: ColumnSpec): boolean {
  return spec.id === "id" || spec.id === "name" || spec.id === "email" || spec.id === "status";
}

/** Leaves of a predicate tree: the simple conditions it tests. */
function countLeaves(p: Predicate): number {
  if (p.kind !== "and" && p.kind !== "or") return 1;
  let count = 0;
  for (const child of p.children) count += countLeaves(child);
  return count;
}

/** The reason a filter value string is refused, or null: at most {@link MAX_FILTER_LENGTH} characters, like GET's. */
function tooLong(value: string): string | null {
  return value.length > MAX_FILTER_LENGTH ? `is ${value.length} characters long; at most ${MAX_FILTER_LENGTH} are accepted` : null;
}

/** One column's filter model (simple or combined) as a predicate; null after reporting errors. */
function modelPredicate(spec: ColumnSpec, model: unknown, at: string, bad: Bad): Predicate | null {
  if (!isObject(model)) {
    bad(at, "must be a filter model object");
    return null;
  }
  const conditions = Array.isArray(model.conditions)
    ? model.conditions
    : model.condition1 !== undefined || model.condition2 !== undefined
      ? [model.condition1, model.condition2].filter((c) => c !== undefined && c !== null)
      : null;
  if (conditions !== null || model.operator !== undefined) {
    const operator = model.operator;
    if (operator !== "AND" && operator !== "OR") {
      bad(`${at}/operator`, `must be "AND" or "OR" (got ${shown(operator)})`);
      return null;
    }
    if (conditions === null || conditions.length === 0) {
      bad(`${at}/conditions`, "must be a non-empty array of filter conditions");
      return null;
    }
    if (conditions.length > MAX_CONDITIONS_PER_COLUMN) {
      bad(`${at}/conditions`, `holds ${conditions.length} conditions; at most ${MAX_CONDITIONS_PER_COLUMN} per column are accepted`);
      return null;
    }
    const key = Array.isArray(model.conditions) ? "conditions" : "condition";
    const children: Predicate[] = [];
    conditions.forEach((c, i) => {
      const where = key === "conditions" ? `${at}/conditions/${i}` : `${at}/condition${i + 1}`;
      if (isObject(c) && c.filterType === undefined) c = { ...c, filterType: model.filterType };
      if (isObject(c) && model.filterType !== undefined && c.filterType !== model.filterType) {
        bad(`${where}/filterType`, `must match the combined model's filterType ${shown(model.filterType)}`);
        return;
      }
      const p = simplePredicate(spec, c, where, bad);
      if (p !== null) children.push(p);
    });
    if (children.length !== conditions.length) return null;
    return children.length === 1 ? children[0] : { kind: operator === "AND" ? "and" : "or", children };
  }
  return simplePredicate(spec, model, at, bad);
}

/**
 * A simple (non-combined) model as a predicate; null after reporting errors. The seed's four
 * keep their own predicates (and indexes); the other columns go through the operator registry
 * (src/kinds/operators.ts).
 */
function simplePredicate(spec: ColumnSpec, model: unknown, at: string, bad: Bad): Predicate | null {
  if (!isObject(model)) {
    bad(at, "must be a filter model object");
    return null;
  }
  if (!isSeed(spec)) {
    const test = compileColumnModel(KINDS[spec.kind], spec, model, at, bad);
    return test === null ? null : { kind: "column", column: spec.id, test };
  }
  const column = spec.id as SeedColumnId;
  const describe = shown(model, 200);
  switch (model.filterType) {
    case "text": {
      const type = model.type ?? "contains";
      if (!TEXT_OPS.includes(type as TextOp)) {
        bad(`${at}/type`, `text filter type must be one of ${TEXT_OPS.join(", ")} (got ${shown(type)}) in ${describe}`);
        return null;
      }
      const op = type as TextOp;
      if (op === "blank" || op === "notBlank") return { kind: "text", column, op, value: "" };
      const f = model.filter;
      if (typeof f !== "string" && typeof f !== "number") {
        bad(`${at}/filter`, `text filter "${op}" needs a string "filter" (got ${shown(f)}) in ${describe}`);
        return null;
      }
      const long = tooLong(String(f));
      if (long !== null) {
        bad(`${at}/filter`, long);
        return null;
      }
      return { kind: "text", column, op, value: String(f) };
    }
    case "number": {
      if (column !== "id") {
        bad(at, `a number filter does not fit column "${column}" (only "id" is a number): ${describe}`);
        return null;
      }
      const type = model.type ?? "equals";
      if (!NUMBER_OPS.includes(type as NumberOp)) {
        bad(`${at}/type`, `number filter type must be one of ${NUMBER_OPS.join(", ")} (got ${shown(type)}) in ${describe}`);
        return null;
      }
      const op = type as NumberOp;
      if (op === "blank" || op === "notBlank") return { kind: "number", column: "id", op, value: 0 };
      const value = numberOf(model.filter);
      if (value === null) {
        bad(`${at}/filter`, `number filter "${op}" needs a number "filter" (got ${shown(model.filter)}) in ${describe}`);
        return null;
      }
      if (op !== "inRange") return { kind: "number", column: "id", op, value };
      const valueTo = numberOf(model.filterTo);
      if (valueTo === null) {
        bad(`${at}/filterTo`, `number filter "inRange" needs a number "filterTo" (got ${shown(model.filterTo)}) in ${describe}`);
        return null;
      }
      return { kind: "number", column: "id", op, value, valueTo };
    }
    case "set": {
      const values = model.values;
      if (!Array.isArray(values)) {
        bad(`${at}/values`, `set filter needs an array "values" in ${describe}`);
        return null;
      }
      const out: string[] = [];
      let blanks = false;
      let ok = true;
      values.forEach((v, i) => {
        if (v === null) {
          blanks = true;
          return;
        }
        if (typeof v !== "string" && typeof v !== "number") {
          ok = false;
          return bad(`${at}/values/${i}`, `must be a string, a number or null (got ${shown(v)})`);
        }
        const s = String(v);
        const long = tooLong(s);
        if (long !== null) {
          ok = false;
          return bad(`${at}/values/${i}`, long);
        }
        if (column === "status" && statusCode(s) < 0) {
          ok = false;
          return bad(`${at}/values/${i}`, `"${s}" is not a status; valid values: ${STATUS_VALUES.join(", ")}`);
        }
        if (column === "id" && numberOf(v) === null) {
          ok = false;
          return bad(`${at}/values/${i}`, `"${s}" is not a number`);
        }
        out.push(column === "id" ? String(numberOf(v)) : s);
      });
      if (!ok) return null;
      const set: Predicate = { kind: "set", column, values: out };
      // (Blanks): null values match blank cells; only name and email can be blank.
      if (blanks && (column === "name" || column === "email")) {
        return { kind: "or", children: [set, { kind: "text", column, op: "blank", value: "" }] };
      }
      return set;
    }
    default:
      bad(`${at}/filterType`, `unsupported filterType ${shown(model.filterType)} for column "${column}"; supported: text, number (id only), set`);
      return null;
  }
}
