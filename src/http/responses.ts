/**
 * Responses of /api/users, their bodies assembled as bytes around the pre-serialized rows
 * (INTERFACE.md "GET /api/users" success body, shapes A + B; "POST /api/users", shape C), and
 * problem+json responses.
 *
 * Bodies are written into one reusable buffer and copied by the `Response` constructor (Bun
 * copies a byte-array body), so a request allocates no body-sized array of its own: at tens of
 * kilobytes a response, fresh arrays were a steady source of garbage-collection work.
 */
import type { GetRequest } from "../query/get.ts";
import { createBodyBuffer, writeRowsJsonInto } from "../store/rows-json.ts";
import type { Store } from "../store/types.ts";
import { type FieldError, PROBLEMS, type ProblemCode, problemBody } from "../query/errors.ts";

const encoder = new TextEncoder();
const DATA_PREFIX = encoder.encode('{"data":');

/** Headers of every JSON success response. */
export const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;

/** The init of every JSON success response, shared (the constructor copies what it needs). */
const JSON_INIT: ResponseInit = { headers: JSON_HEADERS };

/** The body buffer of this process; each body is copied out of it before the next is written. */
const bodyBuffer = createBodyBuffer();

/**
 * The GET response: 200 with `{data, total, page, pageSize, pagination: {page, pageSize, total,
 * totalPages}, meta}`, both shape A and shape B of the seed; totalPages = ceil(total / pageSize),
 * 0 when total is 0. Written in one pass from the columns (store/rows-json.ts).
 * @param rows the page's row numbers, in order
 * @param total rows matching the query
 * @throws Error when the store is corrupt (a 500 for the caller)
 */
export function getResponse(store: Store, rows: Uint32Array, total: number, request: GetRequest): Response {
  const { page, pageSize, meta } = request;
  const totalPages = Math.ceil(total / pageSize);
  const tail =
    `,"total":${total},"page":${page},"pageSize":${pageSize}` +
    `,"pagination":{"page":${page},"pageSize":${pageSize},"total":${total},"totalPages":${totalPages}}` +
    `,"meta":${JSON.stringify(meta)}}`;
  return new Response(writeRowsJsonInto(bodyBuffer, store, rows, DATA_PREFIX, encoder.encode(tail)), JSON_INIT);
}

/**
 * The POST response: 200 with `{data, total}` (shape C).
 * @param rows the window's row numbers, in order
 * @param total rows matching the query
 * @throws Error when the store is corrupt (a 500 for the caller)
 */
export function postResponse(store: Store, rows: Uint32Array, total: number): Response {
  return new Response(writeRowsJsonInto(bodyBuffer, store, rows, DATA_PREFIX, encoder.encode(`,"total":${total}}`)), JSON_INIT);
}

/**
 * An application/problem+json response (RFC 9457).
 * @param headers extra headers (`Allow` for 405)
 * @param extra extra members of the body (`requestId` for 500)
 */
export function problemResponse(
  code: ProblemCode,
  detail: string,
  errors: FieldError[] = [],
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Response {
  return new Response(problemBody(code, detail, errors, extra), {
    status: PROBLEMS[code].status,
    headers: { "content-type": "application/problem+json", ...headers },
  });
}
