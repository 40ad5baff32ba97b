/**
 * Response compression (docs/api.md "HTTP envelope", Compression): `Accept-Encoding`
 * negotiation with q-values (RFC 9110 §12.5.3) and one compressor per content coding.
 *
 * Codings, levels and preference, from a measurement of 100-row pages (10.6 KB of JSON each)
 * on this project's 2-core VMs (µs per body, compression ratio):
 *
 * | coding | level 1 | default level |
 * |---|---|---|
 * | zstd | 29 µs, 4.10 | (3) 34 µs, 4.12 |
 * | gzip | 26 µs, 3.31 | (6) 83 µs, 4.35; level 4: 70 µs, 4.27 |
 * | br | 47 µs, 3.83 | (11) 17 ms; quality 4: 124 µs, 4.31; quality 5: 196 µs, 4.52 |
 *
 * A cheap page costs about 40 µs to answer on one JavaScript thread, so every coding runs at
 * its fastest level (as nginx's default `gzip_comp_level 1` does): a slower level would cut the
 * throughput by half or more to save a few hundred bytes a page. zstd is preferred: gzip needs
 * level 4 and 2.4 times the time to match its ratio, and gzip level 1, 10% faster, leaves 24%
 * more bytes. gzip comes next and brotli last, because brotli is slower than gzip at every
 * level that compresses better. Preference only breaks ties between equal q-values: a client's
 * `br;q=1, gzip;q=0.5` gets brotli.
 */
import { brotliCompressSync, crc32, deflateRawSync, constants as zlib } from "node:zlib";

/** A content coding this server produces. */
export type Coding = "zstd" | "gzip" | "br";

/** Smallest body that is compressed, in bytes (docs/api.md "HTTP envelope": 1 KiB or more). */
export const COMPRESS_MIN_BYTES = 1024;

/** Codings in server preference order (see the module comment for the measurement). */
const PREFERENCE: readonly Coding[] = ["zstd", "gzip", "br"];

/** Negotiation results per distinct `Accept-Encoding` value: clients send a handful of strings. */
const negotiated = new Map<string, Coding | null>();
/** Most distinct header values remembered; past it the cache is cleared (bounded memory). */
const NEGOTIATED_MAX = 256;

/**
 * The coding to use for a client's `Accept-Encoding` (RFC 9110 §12.5.3): the acceptable coding
 * (q > 0, given by name or by `*`) with the highest q-value, ties broken by
 * {@link PREFERENCE}; null when the header is absent or accepts none of ours (the body is then
 * sent as it is; `identity` is always acceptable to this server). `x-gzip` counts as gzip.
 * @param header the `Accept-Encoding` value, or null
 */
export function negotiateCoding(header: string | null): Coding | null {
  if (header === null || header === "") return null;
  const known = negotiated.get(header);
  if (known !== undefined) return known;
  const coding = parseAcceptEncoding(header);
  if (negotiated.size >= NEGOTIATED_MAX) negotiated.clear();
  negotiated.set(header, coding);
  return coding;
}

/** {@link negotiateCoding} without the cache. */
function parseAcceptEncoding(header: string): Coding | null {
  const q = qualities(header);
  let best: Coding | null = null;
  let bestQ = 0;
  for (const coding of PREFERENCE) {
    if (q[coding] > bestQ) {
      best = coding;
      bestQ = q[coding];
    }
  }
  return best;
}

/**
 * True when `Accept-Encoding` accepts gzip (by name, `x-gzip` or `*`, with q > 0): the one
 * coding streamed bodies (an export) use, through the runtime's streaming compressor.
 */
export function acceptsGzip(header: string | null): boolean {
  return header !== null && header !== "" && qualities(header).gzip > 0;
}

/** Each coding's q-value in an `Accept-Encoding` header (0 when not acceptable; `*` counts for the unnamed). */
function qualities(header: string): Record<Coding, number> {
  const q: Record<Coding, number> = { zstd: -1, gzip: -1, br: -1 };
  let star = -1;
  for (const part of header.split(",")) {
    const [rawName, ...params] = part.split(";");
    const name = rawName.trim().toLowerCase();
    if (name === "") continue;
    let weight = 1;
    for (const param of params) {
      const [key, value] = param.split("=");
      if (key.trim().toLowerCase() !== "q") continue;
      const parsed = Number(value?.trim());
      // RFC 9110 §12.4.2: qvalue is 0 to 1 with at most 3 decimals; a malformed one refuses the coding.
      weight = Number.isFinite(parsed) && parsed >= 0 && parsed <= 1 ? parsed : 0;
    }
    if (name === "*") star = weight;
    else if (name === "zstd" || name === "gzip" || name === "br") q[name] = weight;
    else if (name === "x-gzip" && q.gzip < 0) q.gzip = weight;
  }
  for (const coding of PREFERENCE) if (q[coding] < 0) q[coding] = Math.max(0, star);
  return q;
}

/** brotli's parameters: quality 1 (see the module comment) and the size hint. */
function brotliParams(length: number) {
  return { params: { [zlib.BROTLI_PARAM_QUALITY]: 1, [zlib.BROTLI_PARAM_SIZE_HINT]: length } };
}

/**
 * `bytes` compressed with `coding` at the level chosen above.
 * @returns a new array (the input, often a reused buffer, is left as it is)
 */
export function compressBytes(bytes: Uint8Array<ArrayBuffer>, coding: Coding): Uint8Array<ArrayBuffer> {
  switch (coding) {
    case "zstd":
      return Bun.zstdCompressSync(bytes, { level: 1 }) as Uint8Array<ArrayBuffer>;
    case "gzip":
      return Bun.gzipSync(bytes, { level: 1 });
    default:
      return new Uint8Array(brotliCompressSync(bytes, brotliParams(bytes.length)));
  }
}

/** Media types worth compressing: JSON (problem+json included), HTML, plain text and the like. */
const COMPRESSIBLE = /^(?:application\/(?:json|[a-z0-9.+-]*\+json|xml|javascript)|text\/|image\/svg\+xml)/i;

/** True when a response of this `Content-Type` is compressed when large enough. */
export function isCompressible(contentType: string | null): boolean {
  return contentType !== null && COMPRESSIBLE.test(contentType);
}

/** The 10-byte gzip member header (RFC 1952 §2.3): magic, deflate, no flags, no time, OS unknown. */
const GZIP_HEADER = Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff);

/**
 * A gzip body (RFC 1952) written piece by piece, each piece compressed when it is made: raw
 * deflate at level 1 (the fastest; see the module comment) ended with a sync flush, so that the
 * bytes so far are a whole prefix of the deflate stream and nothing waits in a compressor —
 * output goes out exactly as fast as the client reads the pieces (a streaming compressor in
 * between read ahead and buffered its output: 8 MiB per slow reader, measured). Each piece is
 * compressed on its own (no back-reference into the previous one): for pieces of hundreds of
 * kilobytes, a loss of well under 1% of the ratio.
 */
export class GzipPieces {
  private crc = 0;
  private size = 0;

  /** The member header: the first bytes of the body. */
  header(): Uint8Array {
    return GZIP_HEADER;
  }

  /** `bytes` compressed (a new array; `bytes` may be reused after the call). */
  piece(bytes: Uint8Array): Uint8Array {
    this.crc = crc32(bytes, this.crc);
    this.size = (this.size + bytes.length) % 2 ** 32;
    return deflateRawSync(bytes, { level: 1, finishFlush: zlib.Z_SYNC_FLUSH });
  }

  /** The last bytes: the final (empty) deflate block, then CRC-32 and size mod 2^32 of everything, little-endian. */
  end(): Uint8Array {
    const last = deflateRawSync(new Uint8Array(0), { level: 1 });
    const out = new Uint8Array(last.length + 8);
    out.set(last, 0);
    const view = new DataView(out.buffer);
    view.setUint32(last.length, this.crc >>> 0, true);
    view.setUint32(last.length + 4, this.size, true);
    return out;
  }
}
