/**
 * Responses of the data routes (/api/users, or the resource's), their bodies assembled as bytes around the pre-serialized rows
 * (docs/api.md "GET /api/users" success body, shapes A + B; "POST /api/users", shape C),
 * problem+json responses, and the headers and compression of docs/api.md "HTTP envelope".
 *
 * Bodies are written into one reusable buffer and copied by the `Response` constructor (Bun
 * copies a byte-array body), so a request allocates no body-sized array of its own: at tens of
 * kilobytes a response, fresh arrays were a steady source of garbage-collection work.
 */
import type { Logger } from "pino";
import type { GetRequest } from "../query/get.ts";
import { createBodyBuffer, writeRowsJsonInto } from "../store/rows-json.ts";
import { type Schema, shownSpec } from "../schema/kinds.ts";
import type { Projection } from "../store/record-fields.ts";
import type { ExtraRecords, Store } from "../store/types.ts";
import { type FieldError, MAX_LISTED_ERRORS, PROBLEMS, type ProblemCode } from "../query/errors.ts";
import { COMPRESS_MIN_BYTES, type Coding, compressBytes, negotiateCoding } from "./compress.ts";
import { ifNoneMatchHits } from "./conditional.ts";

const encoder = new TextEncoder();
const DATA_PREFIX = encoder.encode('{"data":');

/** Content type of JSON success bodies. */
export const JSON_TYPE = "application/json; charset=utf-8";

/** Content type of problem bodies (RFC 9457 §3). */
export const PROBLEM_TYPE = "application/problem+json";

/** Headers of a JSON response that is not over the data (/healthz, /readyz). */
export const JSON_HEADERS = { "content-type": JSON_TYPE, vary: "Accept-Encoding" } as const;

/** The body buffer of this process; each body is copied out of it before the next is written. */
const bodyBuffer = createBodyBuffer();

/**
 * The headers of every answer over the data, 200 or 304 (docs/api.md "HTTP envelope",
 * Conditional GET): JSON content type, `ETag`, `X-Snapshot-Id`, `Cache-Control: no-cache`
 * (a cache keeps the answer but asks again each time, with `If-None-Match`) and
 * `Vary: Accept-Encoding` (the body's coding depends on that header).
 *
 * One `Headers` object, its entity tag and snapshot id set just before each response is made
 * (and nothing in between, so answers never share them): the `Response` constructor copies a
 * `Headers` object natively, which measured about 5% of a cheap request's throughput cheaper
 * than converting a fresh plain object of five headers.
 */
const dataHeaders = new Headers({ "content-type": JSON_TYPE, etag: "", "x-snapshot-id": "", "cache-control": "no-cache", vary: "Accept-Encoding" });
/** The init of every uncompressed data 200, holding {@link dataHeaders}. */
const DATA_INIT: ResponseInit = { headers: dataHeaders };

/**
 * A data 200 of `bytes` (JSON), with the data headers, compressed with `coding` when the body
 * has at least {@link COMPRESS_MIN_BYTES} bytes.
 * @param bytes the body; may be a view of a reused buffer (the constructor copies it)
 * @param etag the quoted entity tag (conditional.ts `entityTag`)
 * @param coding the negotiated coding (compress.ts `negotiateCoding`), or null for none
 */
function dataResponse(bytes: Uint8Array<ArrayBuffer>, etag: string, snapshotId: string, coding: Coding | null): Response {
  dataHeaders.set("etag", etag);
  dataHeaders.set("x-snapshot-id", snapshotId);
  if (coding !== null && bytes.byteLength >= COMPRESS_MIN_BYTES) {
    const headers = new Headers(dataHeaders);
    headers.set("content-encoding", coding);
    return new Response(compressBytes(bytes, coding), { headers });
  }
  return new Response(bytes, DATA_INIT);
}

/**
 * A response of `bytes` with `headers`, compressed with `coding` when the body has at least
 * {@link COMPRESS_MIN_BYTES} bytes (then `Content-Encoding` is set in `headers`).
 * @param bytes the body; may be a view of a reused buffer (the constructor copies it)
 * @param headers the response's headers; changed in place when the body is compressed
 * @param coding the negotiated coding (compress.ts `negotiateCoding`), or null for none
 */
export function bytesResponse(bytes: Uint8Array<ArrayBuffer>, status: number, headers: Record<string, string>, coding: Coding | null): Response {
  if (coding !== null && bytes.byteLength >= COMPRESS_MIN_BYTES) {
    headers["content-encoding"] = coding;
    return new Response(compressBytes(bytes, coding), { status, headers });
  }
  return new Response(bytes, { status, headers });
}

/** {@link bytesResponse} of a string body (UTF-8). */
export function textResponse(text: string, status: number, headers: Record<string, string>, coding: Coding | null): Response {
  // Short bodies are never compressed, whatever their encoded length: skip the encoding.
  if (coding === null || text.length < COMPRESS_MIN_BYTES / 3) return new Response(text, { status, headers });
  return bytesResponse(encoder.encode(text), status, headers, coding);
}

/**
 * What a page's answer is written from besides its rows: the store, the answer's entity tag and
 * coding, the id `X-Snapshot-Id` shows, a live replica's changed rows, the role's columns.
 */
export interface PageContext {
  store: Store;
  /** The answer's quoted entity tag (conditional.ts `entityTag`). */
  etag: string;
  /** The negotiated coding, or null for none. */
  coding: Coding | null;
  /** The id `X-Snapshot-Id` shows (engine/execute.ts `versionId`). */
  version: string;
  /** The records of a live replica's changed rows (engine/execute.ts `extraRecords`), or null. */
  extra: ExtraRecords | null;
  /** The columns each record keeps (an access role's), or null for every one. */
  projection: Projection | null;
}

/** A page's 200: `{"data":[records…]` then `tail` (the rest of the object, closing brace included). */
function pageResponse(context: PageContext, rows: Uint32Array, tail: string): Response {
  const body = writeRowsJsonInto(bodyBuffer, context.store, rows, DATA_PREFIX, encoder.encode(tail), context.extra, context.projection);
  return dataResponse(body, context.etag, context.version, context.coding);
}

/**
 * The GET response: 200 with `{data, total, page, pageSize, pagination: {page, pageSize, total,
 * totalPages}, meta}`, both shape A and shape B of the seed; totalPages = ceil(total / pageSize),
 * 0 when total is 0. Written in one pass from the columns (store/rows-json.ts).
 * @param rows the page's row numbers, in order
 * @param total rows matching the query
 * @param metaJson `JSON.stringify(request.meta)`, computed once by the caller
 * @throws Error when the store is corrupt (a 500 for the caller)
 */
export function getResponse(context: PageContext, rows: Uint32Array, total: number, request: GetRequest, metaJson: string): Response {
  const { page, pageSize } = request;
  const totalPages = Math.ceil(total / pageSize);
  return pageResponse(
    context,
    rows,
    `,"total":${total},"page":${page},"pageSize":${pageSize}` + `,"pagination":{"page":${page},"pageSize":${pageSize},"total":${total},"totalPages":${totalPages}}` + `,"meta":${metaJson}}`,
  );
}

/**
 * The POST response: 200 with `{data, total}` (shape C).
 * @param rows the window's row numbers, in order
 * @param total rows matching the query
 * @throws Error when the store is corrupt (a 500 for the caller)
 */
export function postResponse(context: PageContext, rows: Uint32Array, total: number): Response {
  return pageResponse(context, rows, `,"total":${total}}`);
}

/**
 * GET /api/users/schema's 200 (docs/api.md "Any users table: the schema", "Any users table"):
 * `{columns, key, partition, rows, snapshotId}` — the served snapshot's columns in schema order
 * (`{id, kind, values?}`), the key column's id, the enum column that partitions the rows (null
 * when none does), its row count and snapshot id — with the same `ETag`, `X-Snapshot-Id` and
 * caching headers as the data routes.
 * With access control, an access role's schema instead (docs/api.md "Access control"): its
 * columns alone, its partition column when it sees it, and, for a role limited to some rows,
 * the rows it sees.
 * @param etag the answer's quoted entity tag (conditional.ts `entityTag`)
 * @param coding the negotiated coding, or null for none
 * @param version the id `X-Snapshot-Id` and `snapshotId` show (engine/execute.ts `versionId`: `<snapshotId>@<LSN>` over a live replica's changes)
 * @param rows the rows the client sees (engine/execute.ts `rowCountOf`, or an access role's count), default the store's row count
 * @param shown the schema the client sees (an access role's), default the store's
 * @param withId false to leave `snapshotId` out of the body (a restricted access role's: docs/api.md "Access control")
 */
export function schemaResponse(store: Store, etag: string, coding: Coding | null, version: string = store.snapshotId, rows: number = store.rowCount, shown: Schema = store.schema, withId = true): Response {
  const { key, partition } = shown;
  const columns = shown.columns.map(shownSpec);
  const body = JSON.stringify(withId ? { columns, key, partition, rows, snapshotId: version } : { columns, key, partition, rows });
  return dataResponse(encoder.encode(body), etag, version, coding);
}

/**
 * For every GET data route, before its query runs (docs/api.md "HTTP envelope", Conditional
 * GET): the 304 Not Modified when the request's `If-None-Match` matches the answer's entity
 * tag, else null (then the route runs the query and answers 200). A 304 has no body and the
 * headers a 200 would carry except the content type (RFC 9110 §15.4.5): `ETag`,
 * `X-Snapshot-Id`, `Cache-Control` and `Vary`.
 * @param etag the answer's quoted entity tag, computed without running the query (conditional.ts `entityTag`)
 * @param snapshotId the id of the snapshot that would answer
 * @param sent the tag as the answers carry it: `etag`, or its weak form `W/<etag>` (explain's)
 */
export function notModified(request: Request, etag: string, snapshotId: string, sent: string = etag): Response | null {
  const ifNoneMatch = request.headers.get("if-none-match");
  if (ifNoneMatch === null || !ifNoneMatchHits(ifNoneMatch, etag)) return null;
  return new Response(null, { status: 304, headers: { etag: sent, "x-snapshot-id": snapshotId, "cache-control": "no-cache", vary: "Accept-Encoding" } });
}

/**
 * An explain 200 (docs/api.md "Explain"): `body` as JSON with the data headers, the entity tag
 * in its weak form (`W/"…"`: the same query on the same data, though the plan may differ as the
 * caches fill, and timings always do).
 * @param etag the quoted entity tag (conditional.ts `entityTag`)
 * @param coding the negotiated coding, or null for none
 */
export function explainResponse(body: unknown, etag: string, snapshotId: string, coding: Coding | null): Response {
  const headers = { "content-type": JSON_TYPE, etag: `W/${etag}`, "x-snapshot-id": snapshotId, "cache-control": "no-cache", vary: "Accept-Encoding" };
  return bytesResponse(encoder.encode(JSON.stringify(body)), 200, headers, coding);
}

/** The HTTP status of each problem kind (docs/api.md "Errors"). */
export const PROBLEM_STATUS: Record<ProblemCode, number> = {
  BAD_PARAMETER: 400,
  BAD_BODY: 400,
  MALFORMED_JSON: 400,
  GROUPING_NOT_SERVED: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL: 500,
  NOT_READY: 503,
  QUERY_TIMEOUT: 503,
  OVERLOADED: 503,
  TOO_MANY_STREAMS: 503,
};

/**
 * The problem+json body of a problem: `{type, title, status, detail, errors?, moreErrors?}`.
 * `errors` lists at most {@link MAX_LISTED_ERRORS} entries; `moreErrors` counts the rest.
 */
export function problemBody(code: ProblemCode, detail: string, errors: FieldError[] = [], extra: Record<string, unknown> = {}): string {
  const p = PROBLEMS[code];
  const body: Record<string, unknown> = { type: p.type, title: p.title, status: PROBLEM_STATUS[code], detail, ...extra };
  if (errors.length > 0) body.errors = errors.length > MAX_LISTED_ERRORS ? errors.slice(0, MAX_LISTED_ERRORS) : errors;
  if (errors.length > MAX_LISTED_ERRORS) body.moreErrors = errors.length - MAX_LISTED_ERRORS;
  return JSON.stringify(body);
}

/**
 * An application/problem+json response (RFC 9457), with `Vary: Accept-Encoding` and compressed
 * like any body when 1 KiB or more.
 * @param headers extra headers (`Allow` for 405, `WWW-Authenticate` for 401, `Connection` for 413)
 * @param extra extra members of the body (`requestId` for 500)
 * @param coding the negotiated coding, or null for none
 */
export function problemResponse(
  code: ProblemCode,
  detail: string,
  errors: FieldError[] = [],
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
  coding: Coding | null = null,
): Response {
  return textResponse(problemBody(code, detail, errors, extra), PROBLEM_STATUS[code], { "content-type": PROBLEM_TYPE, vary: "Accept-Encoding", ...headers }, coding);
}

/** The path of a request URL (`http://host:port/p?q` → `/p`), without building a URL object. */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  let end = url.length;
  if (query >= 0) end = query;
  if (hash >= 0 && hash < end) end = hash;
  return url.slice(start, end);
}

/**
 * A 500 problem with a request id, logged at error level with the error and the request id
 * (docs/api.md "Errors": never a stack trace to the client).
 */
export function internalErrorResponse(logger: Logger, error: unknown, request: Request): Response {
  const requestId = crypto.randomUUID();
  logger.error({ err: error, requestId, method: request.method, path: pathOf(request.url) }, "unexpected error");
  return problemResponse("INTERNAL", `unexpected error; quote request id ${requestId}`, [], {}, { requestId }, negotiateCoding(request.headers.get("accept-encoding")));
}
