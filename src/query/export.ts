/**
 * Parses export requests (docs/api.md "Export"): GET /api/users/export (`format` plus the
 * filter, sort and `q` parameters of GET /api/users; paging ignored) and POST
 * /api/users/export (`{format, sortModel, filterModel, quickFilter}`; the row window ignored).
 */
import type { Schema } from "../schema/kinds.ts";
import { type FieldError, collect, fieldsProblem } from "./errors.ts";
import { parseGetQuery, queryPairs } from "./get.ts";
import { parsePostBody } from "./post.ts";
import type { Query } from "./types.ts";

/** The export formats (docs/api.md "Export"). */
export const EXPORT_FORMATS = ["csv", "ndjson"] as const;

/** An export format: CSV (RFC 4180) or NDJSON. */
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A parsed export request: every matching row (offset 0, no limit) of `query`, in `format`. */
export interface ExportRequest {
  query: Query;
  format: ExportFormat;
}

/** The format named by a request (default csv), or the reason it is refused. */
function formatOf(value: unknown): ExportFormat | string {
  if (value === undefined || value === null || value === "") return "csv";
  const text = typeof value === "string" ? value.toLowerCase() : value;
  return (EXPORT_FORMATS as readonly unknown[]).includes(text) ? (text as ExportFormat) : `must be one of ${EXPORT_FORMATS.join(", ")} (got ${JSON.stringify(value)})`;
}

/**
 * Parses a GET /api/users/export query string.
 * @throws ProblemError BAD_PARAMETER listing every bad parameter
 */
export function parseExportGet(search: string, maxPageSize: number, schema: Schema): ExportRequest {
  const errors: FieldError[] = [];
  const parsed = collect(errors, () => parseGetQuery(search, maxPageSize, schema, { paging: false, sort: true }));
  const pairs = queryPairs(search);
  let formatText: string | undefined;
  for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === "format") formatText = pairs[i + 1];
  const format = formatOf(formatText);
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) errors.push({ parameter: "format", detail: format });
  if (errors.length > 0 || parsed === null) throw fieldsProblem("BAD_PARAMETER", errors);
  return { query: parsed.query, format: format as ExportFormat };
}

/**
 * Parses a POST /api/users/export body.
 * @throws ProblemError BAD_BODY listing every bad field by JSON pointer
 */
export function parseExportPost(body: unknown, maxPageSize: number, schema: Schema): ExportRequest {
  const errors: FieldError[] = [];
  const parsed = collect(errors, () => parsePostBody(body, maxPageSize, schema, { window: false, sort: true }));
  const fields = (typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  const format = formatOf(fields.format);
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) errors.push({ pointer: "/format", detail: format });
  if (errors.length > 0 || parsed === null) throw fieldsProblem("BAD_BODY", errors);
  return { query: parsed.query, format: format as ExportFormat };
}
