/**
 * Parses GET /api/users query strings (TanStack Table's spelling and its aliases) into the
 * normalized query. Rules: docs/api.md "GET /api/users"; every `filter[<col>]` is read by its
 * column's kind (src/kinds: kind.ts `getFilter`).
 */
import type { Schema } from "../schema/kinds.ts";
import { KINDS } from "../kinds/registry.ts";
import { MAX_FILTER_LENGTH } from "../kinds/operators.ts";
import { type FieldError, fieldsProblem } from "./errors.ts";
import { columnOf, unknownColumn } from "./columns.ts";
import type { Predicate, Query, SortDirection } from "./types.ts";
import { searchEcho, searchPredicate } from "./search.ts";


/** Default page size (docs/api.md "GET /api/users": TanStack Table starts at 10). */
export const DEFAULT_PAGE_SIZE = 10;

/** A parsed GET request: the query plus what the response echoes. */
export interface GetRequest {
  query: Query;
  /** 1-based page. */
  page: number;
  /** Rows per page. */
  pageSize: number;
  /** The sort, filters and search applied, normalized (the response's `meta`). */
  meta: { sortBy?: string; sortOrder?: SortDirection; filters?: Record<string, string>; q?: string };
}

/** What a GET route reads besides the filters and the search (docs/api.md: facets ignore paging and sort, export paging). */
export interface GetParts {
  /** Read `page`, `pageSize`/`limit` (else ignored, and the query's window is every row). */
  paging: boolean;
  /** Read `sortBy`/`sort`, `sortOrder`/`order` (else ignored: no sort keys). */
  sort: boolean;
}

const ALL_PARTS: GetParts = { paging: true, sort: true };

const FILTER_KEY = /^filter\[([^\[\]]*)\]$/;
const INTEGER = /^\d+$/;

/**
 * Parses a query string (`?` optional; brackets raw or percent-encoded, spaces as `+` or `%20`).
 * @param maxPageSize the largest accepted page size, in rows
 * @param schema the served snapshot's schema: the columns `sortBy` and `filter[<col>]` may name
 *   (docs/api.md "Any users table: the schema")
 * @throws ProblemError BAD_PARAMETER listing every bad parameter (docs/api.md "Errors")
 */
export function parseGetQuery(search: string, maxPageSize: number, schema: Schema, parts: GetParts = ALL_PARTS): GetRequest {
  const errors: FieldError[] = [];
  const bad = (parameter: string, detail: string) => errors.push({ parameter, detail });

  // One value per name: repeats must agree (a repeat with another value is ambiguous).
  const values = new Map<string, string>();
  const pairs = queryPairs(search);
  for (let i = 0; i < pairs.length; i += 2) {
    const name = pairs[i];
    const value = pairs[i + 1];
    const prior = values.get(name);
    if (prior !== undefined && prior !== value) bad(name, `given more than once with different values ("${prior}", "${value}")`);
    else values.set(name, value);
  }
  const get = (name: string) => {
    const v = values.get(name);
    return v === undefined || v === "" ? undefined : v;
  };
  const either = (a: string, b: string, normalize: (s: string) => string = (s) => s) => {
    const va = get(a);
    const vb = get(b);
    if (va !== undefined && vb !== undefined && normalize(va) !== normalize(vb)) {
      bad(b, `"${a}" and "${b}" are two spellings of one parameter and disagree ("${va}", "${vb}")`);
    }
    return va !== undefined ? { name: a, value: va } : vb !== undefined ? { name: b, value: vb } : undefined;
  };

  let page = 1;
  const pageText = parts.paging ? get("page") : undefined;
  if (pageText !== undefined) {
    const p = INTEGER.test(pageText) ? Number(pageText) : Number.NaN;
    if (!Number.isSafeInteger(p) || p < 1) bad("page", `must be an integer >= 1 (got "${pageText}")`);
    else page = p;
  }

  let pageSize = DEFAULT_PAGE_SIZE;
  const size = parts.paging ? either("pageSize", "limit") : undefined;
  if (size !== undefined) {
    const s = INTEGER.test(size.value) ? Number(size.value) : Number.NaN;
    if (!Number.isSafeInteger(s) || s < 1 || s > maxPageSize) bad(size.name, `must be an integer from 1 to ${maxPageSize} (got "${size.value}")`);
    else pageSize = s;
  }

  let sortBy: string | undefined;
  const sort = parts.sort ? either("sortBy", "sort") : undefined;
  if (sort !== undefined) {
    const spec = columnOf(schema, sort.value);
    if (spec === undefined) bad(sort.name, unknownColumn(schema, sort.value));
    else if (!KINDS[spec.kind].sortable) bad(sort.name, `column "${spec.id}" is ${spec.kind}: it is returned, never sorted`);
    else sortBy = spec.id;
  }
  let sortOrder: SortDirection = "asc";
  const order = parts.sort ? either("sortOrder", "order", (s) => s.toLowerCase()) : undefined;
  if (order !== undefined) {
    const o = order.value.toLowerCase();
    if (o === "asc" || o === "desc") sortOrder = o;
    else bad(order.name, `must be "asc" or "desc" (got "${order.value}")`);
  }

  const filters: Record<string, string> = {};
  const children: Predicate[] = [];
  for (const [name, raw] of values) {
    if (!name.startsWith("filter[")) continue;
    const m = FILTER_KEY.exec(name);
    if (m === null) {
      bad(name, "malformed filter parameter; expected filter[<column>]");
      continue;
    }
    const column = m[1];
    const spec = columnOf(schema, column);
    if (spec === undefined) {
      bad(name, unknownColumn(schema, column));
      continue;
    }
    if (raw === "") continue;
    if (raw.length > MAX_FILTER_LENGTH) {
      bad(name, `longer than ${MAX_FILTER_LENGTH} characters`);
      continue;
    }
    const parsed = columnFilter(spec.id, KINDS[spec.kind].getFilter(spec, raw, spec.id === schema.key));
    if (typeof parsed === "string") bad(name, parsed);
    else if (parsed !== null) {
      children.push(parsed.predicate);
      filters[column] = parsed.echo;
    }
  }

  let q: string | undefined;
  const searchText = either("q", "search");
  if (searchText !== undefined) {
    const parsed = searchPredicate(searchText.value);
    if (typeof parsed === "string") bad(searchText.name, parsed);
    else if (parsed !== null && parsed.kind === "search") {
      children.push(parsed);
      q = searchEcho(parsed);
    }
  }

  if (errors.length > 0) throw fieldsProblem("BAD_PARAMETER", errors);
  const filter: Predicate | null = children.length === 0 ? null : children.length === 1 ? children[0] : { kind: "and", children };
  const meta: GetRequest["meta"] = {};
  if (sortBy !== undefined) {
    meta.sortBy = sortBy;
    meta.sortOrder = sortOrder;
  }
  if (Object.keys(filters).length > 0) meta.filters = filters;
  if (q !== undefined) meta.q = q;
  return {
    query: {
      filter,
      sort: sortBy === undefined ? [] : [{ column: sortBy, direction: sortOrder, absolute: false }],
      offset: parts.paging ? (page - 1) * pageSize : 0,
      limit: parts.paging ? pageSize : Number.MAX_SAFE_INTEGER,
    },
    page,
    pageSize,
    meta,
  };
}

/**
 * The name/value pairs of a query string, decoded exactly as `new URLSearchParams(search)`
 * decodes them (WHATWG application/x-www-form-urlencoded: a leading `?` dropped, `&`-separated,
 * split at the first `=`, `+` as a space, percent-decoded UTF-8 with U+FFFD for bad bytes, a
 * malformed `%` kept as is), without building the URLSearchParams object: a few substrings
 * instead of a native object per request.
 * @returns names and values alternating, in order: `[name0, value0, name1, value1, …]`
 */
export function queryPairs(search: string): string[] {
  const out: string[] = [];
  const length = search.length;
  let start = length > 0 && search.charCodeAt(0) === 63 ? 1 : 0; // '?'
  while (start <= length) {
    let end = search.indexOf("&", start);
    if (end < 0) end = length;
    if (end > start) {
      const eq = search.indexOf("=", start);
      if (eq >= 0 && eq < end) {
        out.push(decodeComponent(search.slice(start, eq)), decodeComponent(search.slice(eq + 1, end)));
      } else {
        out.push(decodeComponent(search.slice(start, end)), "");
      }
    }
    start = end + 1;
  }
  return out;
}

/** One name or value of a query string, decoded as URLSearchParams does (see {@link queryPairs}). */
function decodeComponent(text: string): string {
  const plus = text.indexOf("+");
  const percent = text.indexOf("%");
  if (plus < 0 && percent < 0) return text;
  const spaced = plus < 0 ? text : text.replaceAll("+", " ");
  if (percent < 0) return spaced;
  try {
    // equal to URLSearchParams' decoding whenever it succeeds (valid escapes of valid UTF-8)
    return decodeURIComponent(spaced);
  } catch {
    // a malformed escape or bad UTF-8: the lenient decoding (`text` holds no '&'; a '=' stays in the value)
    return new URLSearchParams(`x=${text}`).get("x") as string;
  }
}

/** A kind's reading of a GET filter (src/kinds: kind.ts `getFilter`) as a predicate and its echo. */
function columnFilter(column: string, parsed: ReturnType<(typeof KINDS)["number"]["getFilter"]>): { predicate: Predicate; echo: string } | string | null {
  if (parsed === null || typeof parsed === "string") return parsed;
  const children: Predicate[] = parsed.tests.map((test) => ({ kind: "column", column, test }));
  return { predicate: children.length === 1 ? children[0] : { kind: "and", children }, echo: parsed.echo };
}
