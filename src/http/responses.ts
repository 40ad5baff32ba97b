/**
 * Response bodies for /api/users, assembled as bytes around the pre-serialized rows
 * (INTERFACE.md "GET /api/users" success body, shapes A + B; "POST /api/users", shape C).
 */
import type { GetRequest } from "../query/get.ts";
import { type FieldError, PROBLEMS, type ProblemCode, problemBody } from "../query/errors.ts";

const encoder = new TextEncoder();
const DATA_PREFIX = encoder.encode('{"data":');

/** Headers of every JSON success response. */
export const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;

/** Joins byte arrays. */
function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The GET body: `{data, total, page, pageSize, pagination: {page, pageSize, total, totalPages}, meta}`,
 * both shape A and shape B of the seed; totalPages = ceil(total / pageSize), 0 when total is 0.
 * @param dataJson the page's records as a JSON array (bytes)
 */
export function getBody(dataJson: Uint8Array, total: number, request: GetRequest): Uint8Array<ArrayBuffer> {
  const { page, pageSize, meta } = request;
  const totalPages = Math.ceil(total / pageSize);
  const tail =
    `,"total":${total},"page":${page},"pageSize":${pageSize}` +
    `,"pagination":{"page":${page},"pageSize":${pageSize},"total":${total},"totalPages":${totalPages}}` +
    `,"meta":${JSON.stringify(meta)}}`;
  return concat([DATA_PREFIX, dataJson, encoder.encode(tail)]);
}

/** The POST body: `{data, total}` (shape C). */
export function postBody(dataJson: Uint8Array, total: number): Uint8Array<ArrayBuffer> {
  return concat([DATA_PREFIX, dataJson, encoder.encode(`,"total":${total}}`)]);
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
