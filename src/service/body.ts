/**
 * Reading a request body under a byte limit that holds while the body streams in (docs/api.md
 * "HTTP envelope", Limits): a body declared larger is refused before any of it is read, and a
 * chunked one as soon as more than the limit has arrived, so a large body never sits in memory.
 */
import { ProblemError } from "../query/errors.ts";

/**
 * Largest POST body, in bytes (docs/api.md "POST /api/users": at most 64 KiB; "HTTP envelope",
 * Limits: it holds while the body streams in).
 */
export const MAX_BODY_BYTES = 64 * 1024;

/** What is logged when the client closes the connection before the whole body arrived. */
export const CLIENT_ABORT_MESSAGE = "the client closed the connection before sending the whole body";

/** A 413 problem for a body of `bytes` bytes (or more) over `maxBytes`. */
function tooLarge(bytes: number | string, maxBytes: number, atLeast: boolean): ProblemError {
  return new ProblemError("PAYLOAD_TOO_LARGE", `the body is ${atLeast ? "more than " : ""}${bytes} bytes; at most ${maxBytes} are accepted`);
}

/**
 * True when a body read failed because the client closed the connection (nobody is left to
 * answer): Bun rejects the read with a DOMException "AbortError" ("The connection was closed.").
 */
export function isClientAbort(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/**
 * The request's body, at most `maxBytes` long.
 * - With `Content-Length`: refused at once when larger; otherwise read whole (Bun never reads
 *   more than the declared length, so the limit holds). The promise is Bun's own: no wrapper on
 *   the common path.
 * - Without (chunked): read as a stream, counting bytes; past `maxBytes` the stream is cancelled
 *   and nothing more is read.
 * @param maxBytes the limit, in bytes
 * @returns the body's bytes (empty when there is none)
 * @throws ProblemError PAYLOAD_TOO_LARGE (413) past the limit (thrown at once for a declared
 *   length, else as a rejection); a rejection for which {@link isClientAbort} is true when the
 *   client closes the connection mid-body
 */
export function readBodyLimited(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const length = request.headers.get("content-length");
  if (length === null) return readChunked(request, maxBytes);
  if (Number(length) > maxBytes) throw tooLarge(length, maxBytes, false);
  return request.bytes();
}

/** The chunked case of {@link readBodyLimited}. */
async function readChunked(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const body = request.body;
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      // Stop reading: the rest of the body is never buffered (the connection is closed after the 413).
      reader.cancel().catch(() => {});
      throw tooLarge(maxBytes, maxBytes, true);
    }
    chunks.push(value as Uint8Array<ArrayBuffer>);
  }
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
