/**
 * Explain (docs/api.md "Explain"): what an explain request adds to the listing request it
 * carries — the `analyze` switch — and the answer's body, `{query, plan}`: the normalized query
 * as JSON and the plan the engine made for it (engine/plan.ts `PrintedStep`), with each step's
 * rows and milliseconds once it ran.
 */
import type { PrintedStep } from "../engine/plan.ts";
import { KINDS } from "../kinds/registry.ts";
import { shown } from "../kinds/operators.ts";
import { type FieldError, collect, fieldsProblem } from "../query/errors.ts";
import { queryPairs } from "../query/get.ts";
import type { ColumnTest, Predicate, Query } from "../query/types.ts";
import type { ColumnSpec, Schema } from "../schema/kinds.ts";

/** A range test as explain prints it: a missing bound is unbounded. */
export interface PrintedRange {
  op: "range";
  lo?: unknown;
  loOpen?: boolean;
  hi?: unknown;
  hiOpen?: boolean;
  negate?: boolean;
}

/** A column test as explain prints it: the engine's test, infinite bounds left out, stored bounds as the records write values. */
export type PrintedTest = PrintedRange | Exclude<ColumnTest, { op: "range" }>;

/** A predicate as explain prints it (query/types.ts `Predicate`). */
export type PrintedPredicate =
  | { kind: "column"; column: string; test: PrintedTest }
  | { kind: "search"; terms: string[]; columns?: string[] }
  | { kind: "and" | "or"; children: PrintedPredicate[] };

/** The normalized query as explain prints it (query/types.ts `Query`). */
export interface PrintedQuery {
  filter: PrintedPredicate | null;
  sort: { column: string; direction: "asc" | "desc"; absolute: boolean }[];
  /** First row of the window, in rows. */
  offset: number;
  /** Rows in the window. */
  limit: number;
}

/** The body of an explain answer (docs/api.md "Explain"). */
export interface ExplainBody {
  query: PrintedQuery;
  plan: PrintedStep;
}

/** A stored bound (a double: numbers; day numbers of dates; UTC milliseconds of date-times) as the records write its value. */
function printedBound(spec: ColumnSpec | undefined, stored: number): unknown {
  const valueJson = spec === undefined ? null : KINDS[spec.kind].valueJson;
  return valueJson === null ? stored : JSON.parse(valueJson(spec as ColumnSpec, stored));
}

/** A column test as explain prints it. */
function printTest(spec: ColumnSpec | undefined, test: ColumnTest): PrintedTest {
  if (test.op !== "range") return test;
  const out: PrintedRange = { op: "range" };
  if (Number.isFinite(test.lo)) {
    out.lo = printedBound(spec, test.lo);
    out.loOpen = test.loOpen;
  }
  if (Number.isFinite(test.hi)) {
    out.hi = printedBound(spec, test.hi);
    out.hiOpen = test.hiOpen;
  }
  out.negate = test.negate;
  return out;
}

/** A predicate as explain prints it. */
function printPredicate(schema: Schema, predicate: Predicate): PrintedPredicate {
  switch (predicate.kind) {
    case "column":
      return { kind: "column", column: predicate.column, test: printTest(schema.columns.find((c) => c.id === predicate.column), predicate.test) };
    case "search":
      return predicate.columns === undefined ? { kind: "search", terms: predicate.terms } : { kind: "search", terms: predicate.terms, columns: predicate.columns };
    case "and":
    case "or":
      return { kind: predicate.kind, children: predicate.children.map((child) => printPredicate(schema, child)) };
  }
}

/**
 * The normalized query as explain prints it: the filter tree, the sort keys and the window.
 * A range test's infinite bounds are left out and its finite ones written as the records write
 * the column's values (a date as `YYYY-MM-DD`, a date-time as ISO 8601).
 * @param schema the schema the query was parsed against
 */
export function printQuery(schema: Schema, query: Query): PrintedQuery {
  return {
    filter: query.filter === null ? null : printPredicate(schema, query.filter),
    sort: query.sort.map((key) => ({ column: key.column, direction: key.direction, absolute: key.absolute })),
    offset: query.offset,
    limit: query.limit,
  };
}

/**
 * GET explain's `analyze` parameter: `true` or `false` in any case; absent or empty is false.
 * @param search the request's query string (`?` optional)
 * @returns the switch, or the parameter's error
 */
function analyzeParameter(search: string): boolean | FieldError {
  const pairs = queryPairs(search);
  let value: string | undefined;
  for (let i = 0; i < pairs.length; i += 2) {
    if (pairs[i] !== "analyze" || pairs[i + 1] === "") continue;
    const v = pairs[i + 1].toLowerCase();
    if (value !== undefined && value !== v) return { parameter: "analyze", detail: `given more than once with different values ("${value}", "${v}")` };
    value = v;
  }
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  return { parameter: "analyze", detail: `must be true or false (got ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})` };
}

/**
 * The listing request parsed by `parse`, and the `analyze` switch or its error: a request the
 * listing refuses is refused with exactly the listing's problem, and a bad `analyze` is listed
 * after the listing's bad fields.
 * @throws ProblemError `code`, or what `parse` throws
 */
function withAnalyze<T>(code: "BAD_PARAMETER" | "BAD_BODY", analyze: boolean | FieldError, parse: () => T): { request: T; analyze: boolean } {
  if (typeof analyze === "boolean") return { request: parse(), analyze };
  const errors: FieldError[] = [];
  collect(errors, parse);
  throw fieldsProblem(code, [...errors, analyze]);
}

/**
 * Parses GET explain: the listing request's parameters by the listing's parser, and `analyze`.
 * @param search the request's query string
 * @param parse the listing's parser over `search`
 * @throws ProblemError BAD_PARAMETER, or what `parse` throws
 */
export function parseExplainGet<T>(search: string, parse: () => T): { request: T; analyze: boolean } {
  return withAnalyze("BAD_PARAMETER", analyzeParameter(search), parse);
}

/**
 * Parses POST explain: the listing's body by the listing's parser, and `analyze` (a boolean,
 * or null or absent for false).
 * @param body the decoded JSON body
 * @param parse the listing's parser over `body`
 * @throws ProblemError BAD_BODY, or what `parse` throws (a body that is not an object, grouping asked for)
 */
export function parseExplainPost<T>(body: unknown, parse: () => T): { request: T; analyze: boolean } {
  const value = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as { analyze?: unknown }).analyze : undefined;
  const analyze: boolean | FieldError =
    value === undefined || value === null || typeof value === "boolean" ? value === true : { pointer: "/analyze", detail: `must be true or false (got ${shown(value)})` };
  return withAnalyze("BAD_BODY", analyze, parse);
}
