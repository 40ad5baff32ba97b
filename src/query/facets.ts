/**
 * Parses facets requests (docs/api.md "Facets"): GET /api/users/facets (the filter and `q`
 * parameters of GET /api/users, plus `columns`, `facetLimit`, `facetSearch`) and POST
 * /api/users/facets (`{columns, filterModel, quickFilter, limit, search}`).
 */
import type { Schema } from "../schema/kinds.ts";
import { MAX_FILTER_LENGTH } from "../kinds/operators.ts";
import { KINDS } from "../kinds/registry.ts";
import { columnOf, unknownColumn } from "./columns.ts";
import { type FieldError, collect, fieldsProblem } from "./errors.ts";
import { parseGetQuery, queryPairs } from "./get.ts";
import { parsePostBody } from "./post.ts";
import type { Predicate } from "./types.ts";

/** Most values one facet lists (docs/api.md "Facets"). */
export const MAX_FACET_LIMIT = 1000;

/** Values listed when the request names no limit (docs/api.md "Facets"). */
export const DEFAULT_FACET_LIMIT = 20;

/** Most columns one facets request may name (each is a filter evaluation). */
export const MAX_FACET_COLUMNS = 64;

/** A facets request, validated. */
export interface FacetQuery {
  /** Column ids of the schema, distinct, in request order, none of kind `json`; 1…{@link MAX_FACET_COLUMNS}. */
  columns: string[];
  /** Every filter and the search, as one predicate (null: none). */
  filter: Predicate | null;
  /**
   * Rows outside it are never counted, whichever column (an access role's rows: docs/api.md
   * "Access control"): ANDed with the filter of every facet and of the total, and, unlike the
   * filter's parts, never dropped as a column's own filter. Absent or null: every row.
   */
  scope?: Predicate | null;
  /** Most values listed per column, 1…{@link MAX_FACET_LIMIT}. */
  limit: number;
  /** Keep values whose folded string contains this (folded when used); null keeps all. */
  search: string | null;
}

/**
 * The facet columns named by a request: known, of a kind that has a facet (not `json`), deduplicated.
 * @param report records a bad entry (`where` the parameter or pointer)
 */
function facetColumns(schema: Schema, names: unknown[], where: (i: number) => string, report: (at: string, detail: string) => void): string[] {
  const out: string[] = [];
  names.forEach((name, i) => {
    const spec = columnOf(schema, name);
    if (spec === undefined) return report(where(i), unknownColumn(schema, name));
    if (KINDS[spec.kind].facet === null) return report(where(i), `column "${spec.id}" is ${spec.kind}: it has no facet`);
    if (!out.includes(spec.id)) out.push(spec.id);
  });
  return out;
}

/** The reason a facet limit is refused, or null. */
function limitProblem(value: unknown): string | null {
  return Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_FACET_LIMIT ? null : `must be an integer from 1 to ${MAX_FACET_LIMIT} (got ${JSON.stringify(value)})`;
}

/** The reason a facet search is refused, or null. */
function searchProblem(value: string): string | null {
  return value.length > MAX_FILTER_LENGTH ? `is ${value.length} characters long; at most ${MAX_FILTER_LENGTH} are accepted` : null;
}

/**
 * Parses a GET /api/users/facets query string: `columns` (a comma list, required), the
 * `filter[<col>]` and `q`/`search` parameters of GET /api/users, `facetLimit` and
 * `facetSearch`; paging and sort parameters are ignored.
 * @throws ProblemError BAD_PARAMETER listing every bad parameter
 */
export function parseFacetsGet(search: string, maxPageSize: number, schema: Schema): FacetQuery {
  const errors: FieldError[] = [];
  const bad = (parameter: string, detail: string) => errors.push({ parameter, detail });
  const filter = collect(errors, () => parseGetQuery(search, maxPageSize, schema, { paging: false, sort: false }).query.filter);
  const pairs = queryPairs(search);
  const value = (name: string) => {
    let found: string | undefined;
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === name && pairs[i + 1] !== "") found = pairs[i + 1];
    return found;
  };
  const names = (value("columns") ?? "").split(",").map((c) => c.trim()).filter((c) => c !== "");
  if (names.length === 0) bad("columns", "required: a comma list of the columns to count");
  else if (names.length > MAX_FACET_COLUMNS) bad("columns", `names ${names.length} columns; at most ${MAX_FACET_COLUMNS} are accepted`);
  const columns = facetColumns(schema, names, () => "columns", bad);
  let limit = DEFAULT_FACET_LIMIT;
  const limitText = value("facetLimit");
  if (limitText !== undefined) {
    const parsed = /^\d+$/.test(limitText) ? Number(limitText) : limitText;
    const problem = limitProblem(parsed);
    if (problem !== null) bad("facetLimit", problem);
    else limit = parsed as number;
  }
  const facetSearch = value("facetSearch") ?? null;
  const problem = facetSearch === null ? null : searchProblem(facetSearch);
  if (problem !== null) bad("facetSearch", problem);
  if (errors.length > 0) throw fieldsProblem("BAD_PARAMETER", errors);
  return { columns, filter, limit, search: facetSearch };
}

/**
 * Parses a POST /api/users/facets body `{columns, filterModel, quickFilter, limit, search}`
 * (`filterModel` and `quickFilter` as POST /api/users reads them; `sortModel`, `startRow` and
 * `endRow` ignored).
 * @throws ProblemError BAD_BODY listing every bad field by JSON pointer
 */
export function parseFacetsPost(body: unknown, maxPageSize: number, schema: Schema): FacetQuery {
  const errors: FieldError[] = [];
  const bad = (pointer: string, detail: string) => errors.push({ pointer, detail });
  const filter = collect(errors, () => parsePostBody(body, maxPageSize, schema, { window: false, sort: false }).query.filter);
  const fields = (typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  let columns: string[] = [];
  if (!Array.isArray(fields.columns) || fields.columns.length === 0) bad("/columns", "required: a non-empty array of column ids");
  else if (fields.columns.length > MAX_FACET_COLUMNS) bad("/columns", `names ${fields.columns.length} columns; at most ${MAX_FACET_COLUMNS} are accepted`);
  else columns = facetColumns(schema, fields.columns, (i) => `/columns/${i}`, bad);
  let limit = DEFAULT_FACET_LIMIT;
  if (fields.limit !== undefined && fields.limit !== null) {
    const problem = limitProblem(fields.limit);
    if (problem !== null) bad("/limit", problem);
    else limit = fields.limit as number;
  }
  let search: string | null = null;
  if (fields.search !== undefined && fields.search !== null) {
    if (typeof fields.search !== "string") bad("/search", `must be a string (got ${JSON.stringify(fields.search)})`);
    else {
      const problem = searchProblem(fields.search);
      if (problem !== null) bad("/search", problem);
      else search = fields.search;
    }
  }
  if (errors.length > 0) throw fieldsProblem("BAD_BODY", errors);
  return { columns, filter, limit, search };
}
