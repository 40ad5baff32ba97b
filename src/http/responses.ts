/**
 * Response bodies for /api/users, assembled as bytes around the pre-serialized rows
 * (INTERFACE.md "GET /api/users" success body, shapes A + B; "POST /api/users", shape C).
 */
import type { GetRequest } from "../query/get.ts";
import { writeRowsJson } from "../store/rows-json.ts";
import type { Store } from "../store/types.ts";
import { type FieldError, PROBLEMS, type ProblemCode, problemBody } from "../query/errors.ts";

const encoder = new TextEncoder();
const DATA_PREFIX = encoder.encode('{"data":');

/** Headers of every JSON success response. */
export const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;

/**
 * The GET body: `{data, total, page, pageSize, pagination: {page, pageSize, total, totalPages}, meta}`,
 * both shape A and shape B of the seed; totalPages = ceil(total / pageSize), 0 when total is 0.
 * Written in one pass from the columns (store/rows-json.ts).
 * @param rows the page's row numbers, in order
 * @param total rows matching the query
 */
export function getBody(store: Store, rows: Uint32Array, total: number, request: GetRequest): Uint8Array<ArrayBuffer> {
  const { page, pageSize, meta } = request;
  const totalPages = Math.ceil(total / pageSize);
  const tail =
    `,"total":${total},"page":${page},"pageSize":${pageSize}` +
    `,"pagination":{"page":${page},"pageSize":${pageSize},"total":${total},"totalPages":${totalPages}}` +
    `,"meta":${JSON.stringify(meta)}}`;
  return writeRowsJson(store, rows, DATA_PREFIX, encoder.encode(tail));
}

/** The POST body: `{data, total}` (shape C). */
export function postBody(store: Store, rows: Uint32Array, total: number): Uint8Array<ArrayBuffer> {
  return writeRowsJson(store, rows, DATA_PREFIX, encoder.encode(`,"total":${total}}`));
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
