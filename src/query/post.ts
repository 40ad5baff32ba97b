/**
 * Parses AG Grid Infinite Row Model request bodies (POST /api/users) into the normalized
 * query. Rules: docs/api.md "POST /api/users" and "The two real clients"; AG Grid's filter
 * model (text, number, set, combined) and sort model.
 */
import type { ColumnSpec, Schema } from "../schema/kinds.ts";
import { compileColumnModel, shown } from "../kinds/operators.ts";
import { KINDS } from "../kinds/registry.ts";
import { columnOf, unknownColumn } from "./columns.ts";
import { searchPredicate } from "./search.ts";
import { type FieldError, ProblemError, fieldsProblem } from "./errors.ts";
import type { Predicate, Query, SortKey } from "./types.ts";

/** Default row window when `endRow` is absent: AG Grid's block size (docs/api.md, cacheBlockSize). */
export const DEFAULT_BLOCK_SIZE = 100;

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
 *   (docs/api.md "Any users table: the schema")
 * @throws ProblemError BAD_BODY listing every bad field by JSON pointer, or
 *   GROUPING_NOT_SERVED when the body asks for row grouping or pivoting
 */
export function parsePostBody(body: unknown, maxPageSize: number, schema: Schema, parts: PostParts = ALL_PARTS): PostRequest {
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
        if (spec === undefined) return bad(`${at}/colId`, unknownColumn(schema, item.colId));
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
          bad(at, unknownColumn(schema, colId));
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

/** Leaves of a predicate tree: the simple conditions it tests. */
function countLeaves(p: Predicate): number {
  if (p.kind !== "and" && p.kind !== "or") return 1;
  let count = 0;
  for (const child of p.children) count += countLeaves(child);
  return count;
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
 * A simple (non-combined) model as a predicate through the operator registry
 * (src/kinds/operators.ts), whatever the column; null after reporting errors.
 */
function simplePredicate(spec: ColumnSpec, model: unknown, at: string, bad: Bad): Predicate | null {
  if (!isObject(model)) {
    bad(at, "must be a filter model object");
    return null;
  }
  const test = compileColumnModel(KINDS[spec.kind], spec, model, at, bad);
  return test === null ? null : { kind: "column", column: spec.id, test };
}
