/**
 * Input readers for data files (NDJSON in ndjson.ts, a JSON array in json-array.ts, CSV in
 * csv.ts, what they share in records.ts): every field of every record a raw column, none
 * special (docs/api.md "Any users table: from your data to columns"). The input is a byte stream ({@link readUserStream}):
 * a plain file read in chunks of {@link READ_CHUNK_BYTES}, a `.gz` file gunzipped as it is read,
 * or standard input (`-`), opened by {@link openInput}. The columns grow as records arrive, and
 * the first bad record stops the read with an {@link IngestError} that names the file
 * (`<stdin>` for standard input) and the line. The key is chosen, and its values checked (never
 * null, unique), once the read is done (snapshot/columns.ts); a bad record found during the read
 * gives way to a duplicate key on an earlier line.
 *
 * Speed: NDJSON lines that are objects of strings, numbers, booleans and nulls (nested objects
 * and arrays kept as JSON text) are read straight from the bytes, strings copied as UTF-8
 * without a JS string (ndjson.ts); other lines, JSON arrays and CSV decode the text and use
 * JSON.parse or a string scanner. `bun bench/ingest-read.ts` times the read phase of
 * `snapshot build`; its figures are in docs/operations.md ("Reading a data file").
 *
 * Decisions (docs/api.md "Any users table: from your data to columns"):
 * - An empty input, or one holding only whitespace (and blank lines), a JSON `[]` or a CSV
 *   header alone reads as 0 rows, in every format (a CSV header alone still gives its columns).
 *   `snapshot build` refuses them unless told to allow an empty table (snapshot/build-file.ts).
 * - The format: `--format` if given; else the extension (`.ndjson`/`.jsonl`, `.json`, `.csv`; for
 *   `.gz` the one before it); else the first character that is not whitespace (`[` JSON array,
 *   `{` NDJSON, anything else CSV), as for standard input ({@link detectFormat}).
 * - A UTF-8 byte-order mark at the start is skipped. Bytes that are not well-formed UTF-8
 *   (including encoded surrogates) are an error; so is a JSON `\uD800`-style escape that leaves a
 *   lone surrogate in a string.
 * - No field is dropped unless it is left out (`--exclude`, never collected): every field (JSON
 *   members, CSV header columns) becomes a column whose values are collected per record, null
 *   where a record lacks it; a field name that is not a column id (`[A-Za-z_][A-Za-z0-9_]{0,63}`)
 *   is an error, and so are more than {@link MAX_COLUMNS} columns and a value of more than
 *   {@link MAX_VALUE_BYTES} bytes. A JSON member named twice in one record counts once (the
 *   last, as JSON.parse reads it).
 * - JSON numbers are kept exactly: one of magnitude 2^53 or more is refused unless its literal
 *   is an integer of at most 2^53 (`9007199254740993` would be rounded; its source text is
 *   checked).
 * - CSV: RFC 4180 with a header row (names trimmed), a delimiter of one character (`,` by
 *   default); records end with LF or CRLF; a quoted field may hold the delimiter, doubled
 *   quotes, CR and LF; an empty or blank line is skipped; a quote inside an unquoted field, text
 *   after a closing quote, or a bare CR outside quotes is an error. An unquoted empty field is
 *   null, a quoted one (`""`) the empty string (PostgreSQL's rule). When a key is given, the
 *   header must name it: the error says which delimiter was assumed, and which other one would
 *   have given the key.
 * - gzip data that is corrupt or truncated is an error on the line the decompressed text had
 *   reached.
 */
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { extname } from "node:path";
import { pipeline } from "node:stream";
import { createGunzip } from "node:zlib";

import { type CsvOptions, csvParser } from "./csv.ts";
import { jsonArrayParser } from "./json-array.ts";
import { duplicateKeyReason, rawKeyDuplicate } from "./key.ts";
import { MAX_COLUMNS, MAX_VALUE_BYTES } from "./limits.ts";
import { ndjsonConsumer } from "./ndjson.ts";
import { type ByteConsumer, ColumnsBuilder, IngestError, type RawColumns, textConsumer } from "./records.ts";

export { IngestError, type RawColumns };

/** The input formats {@link readUsers} understands. */
export type InputFormat = "ndjson" | "json" | "csv";

/** Bytes read from the file per read call, by default. */
export const READ_CHUNK_BYTES = 8 << 20;

/** What a read collects and checks, whatever the source: the fields left out, the key, the CSV delimiter. */
export interface FieldOptions {
  /** Fields left out unread (`--exclude`): never collected; the ones the input has are listed in `excluded`. */
  exclude?: readonly string[];
  /**
   * The key column's name: a CSV header must name it; a bad record found during the read gives
   * way to a duplicate of this field's value on an earlier line. Unchecked when absent.
   */
  key?: string;
  /** The CSV field delimiter, one character (default `,`). */
  delimiter?: CsvOptions["delimiter"];
}

/** Options of {@link readUsers}. */
export interface ReadOptions extends FieldOptions {
  /** Bytes per read call of a plain file: an integer ≥ 4, default {@link READ_CHUNK_BYTES} (tests use tiny ones). */
  chunkBytes?: number;
  /** The input's format, overriding detection ({@link detectFormat}). */
  format?: InputFormat;
  /**
   * Called once the format is known (before the first record is parsed): `file` as in error
   * messages (`<stdin>` for `-`), the format, and whether the input is being gunzipped.
   */
  onFormat?: (info: { file: string; format: InputFormat; gzip: boolean }) => void;
}

/**
 * The format of `path` (for a `.gz` input, its name without `.gz`; "" for standard input): by
 * extension (`.ndjson`/`.jsonl` → ndjson, `.json` → json, `.csv` → csv), else by the first
 * non-whitespace character of `head` (`[` → json, `{` → ndjson, anything else → csv). A `.json`
 * file whose content starts with `{` is read as NDJSON.
 */
export function detectFormat(path: string, head: string): InputFormat {
  const ext = extname(path).toLowerCase();
  let first = "";
  for (let i = 0; i < head.length; i++) {
    const ch = head.charAt(i);
    if (ch !== " " && ch !== "\t" && ch !== "\r" && ch !== "\n" && ch !== "\ufeff") {
      first = ch;
      break;
    }
  }
  if (ext === ".ndjson" || ext === ".jsonl") return "ndjson";
  if (ext === ".json") return first === "{" ? "ndjson" : "json";
  if (ext === ".csv") return "csv";
  if (first === "[") return "json";
  if (first === "{") return "ndjson";
  return "csv";
}

/** Why an input file cannot be read, say by the file system's code; what a reason names. */
const INPUT_ERROR_REASONS: Record<string, string> = {
  ENOENT: "no such file",
  EISDIR: "is a directory, not a data file",
  EACCES: "permission denied",
  EPERM: "permission denied",
  ENOTDIR: "a part of the path is not a directory",
  ELOOP: "too many symbolic links",
  EMFILE: "too many open files",
};

/**
 * An input that cannot be read at all (missing, a directory, no permission, an I/O error):
 * `message` is `<path>: cannot read the input: <reason>`; `cause` is the file system's error.
 */
export class InputError extends Error {
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    const code = (cause as { code?: unknown } | null)?.code;
    const known = typeof code === "string" ? INPUT_ERROR_REASONS[code] : undefined;
    super(`${path}: cannot read the input: ${known ?? (cause instanceof Error ? cause.message : String(cause))}`, { cause });
    this.name = "InputError";
  }
}

/** A path of `-` stands for standard input. */
export const STDIN_PATH = "-";

/** The name standard input goes by in error messages. */
export const STDIN_NAME = "<stdin>";

/** The name of input `path` in error messages: the path as given, or `<stdin>` for `-`. */
export function inputName(path: string): string {
  return path === STDIN_PATH ? STDIN_NAME : path;
}

/** An input opened by {@link openInput}: its bytes, and what to call it. */
export interface InputSource {
  /** The name in error messages: the path as given, or `<stdin>` for `-`. */
  file: string;
  /** The name whose extension suggests the format ({@link detectFormat}): the path without `.gz`; "" for standard input. */
  formatName: string;
  /** True when the bytes are gunzipped as they are read (a path ending in `.gz`). */
  gzip: boolean;
  /**
   * The input's bytes (decompressed), in order. A chunk is valid only until the next one is
   * requested: the plain-file reader reads every chunk into the same buffer.
   */
  chunks: AsyncIterable<Uint8Array>;
  /** Bytes of the input on disk (compressed, for gzip); undefined for standard input. */
  totalBytes: number | undefined;
  /** Bytes taken from the input so far (compressed, for gzip). */
  bytesRead(): number;
  /** A guess of the decompressed size in bytes, to size the columns before reading; undefined when unknown. */
  sizeHint: number | undefined;
}

/** Bytes per read of a gzip file, and per chunk of its decompressed output. */
const GZIP_CHUNK_BYTES = 1 << 20;

/**
 * Opens an input for {@link readUserStream}: `-` is standard input, a path ending in `.gz`
 * (any case) is gunzipped while it is read (node:zlib; concatenated members are one stream),
 * anything else is a plain file read in chunks of `chunkBytes`.
 * @param options `chunkBytes`: bytes per read of a plain file (default {@link READ_CHUNK_BYTES});
 *   `stdin`: the stream `-` reads (default `process.stdin`).
 * @throws InputError naming the path when the file cannot be opened or is a directory (ENOENT,
 *   EACCES, EISDIR…); a read of a plain file that fails throws one too.
 */
export async function openInput(path: string, options: { chunkBytes?: number; stdin?: AsyncIterable<Uint8Array> } = {}): Promise<InputSource> {
  const chunkBytes = options.chunkBytes ?? READ_CHUNK_BYTES;
  if (!Number.isInteger(chunkBytes) || chunkBytes < 4) throw new RangeError(`chunkBytes must be an integer >= 4 (got ${chunkBytes})`);
  let bytesRead = 0;
  if (path === STDIN_PATH) {
    const stdin: AsyncIterable<Uint8Array> = options.stdin ?? process.stdin;
    const chunks = (async function* () {
      for await (const chunk of stdin) {
        bytesRead += chunk.length;
        yield chunk;
      }
    })();
    return { file: STDIN_NAME, formatName: "", gzip: false, chunks, totalBytes: undefined, bytesRead: () => bytesRead, sizeHint: undefined };
  }
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw new InputError(path, error);
  }
  let totalBytes: number;
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new InputError(path, Object.assign(new Error("is a directory"), { code: "EISDIR" }));
    totalBytes = stat.size;
  } catch (error) {
    await handle.close();
    throw error instanceof InputError ? error : new InputError(path, error);
  }
  if (path.toLowerCase().endsWith(".gz")) {
    let sizeHint = totalBytes;
    try {
      // A gzip member ends with its uncompressed size mod 2^32 (RFC 1952 ISIZE): a good guess.
      if (totalBytes >= 18) {
        const trailer = Buffer.alloc(4);
        await handle.read(trailer, 0, 4, totalBytes - 4);
        sizeHint = Math.max(totalBytes, trailer.readUInt32LE(0));
      }
    } finally {
      await handle.close();
    }
    const chunks = (async function* () {
      const file = createReadStream(path, { highWaterMark: GZIP_CHUNK_BYTES });
      const gunzip = createGunzip({ chunkSize: GZIP_CHUNK_BYTES });
      // A read error or bad gzip data destroys `gunzip` with it, which the loop below throws.
      pipeline(file, gunzip, () => {});
      try {
        for await (const chunk of gunzip) {
          bytesRead = file.bytesRead;
          yield chunk as Buffer;
        }
        bytesRead = file.bytesRead;
      } finally {
        file.destroy();
        gunzip.destroy();
      }
    })();
    return { file: path, formatName: path.slice(0, -3), gzip: true, chunks, totalBytes, bytesRead: () => bytesRead, sizeHint };
  }
  const chunks = (async function* () {
    try {
      // One buffer for every read: a chunk is valid until the next is requested.
      const buffer = Buffer.allocUnsafe(chunkBytes);
      for (;;) {
        let got: number;
        try {
          got = (await handle.read(buffer, 0, chunkBytes, null)).bytesRead;
        } catch (error) {
          throw new InputError(path, error);
        }
        if (got === 0) return;
        bytesRead += got;
        yield buffer.subarray(0, got);
      }
    } finally {
      await handle.close();
    }
  })();
  return { file: path, formatName: path, gzip: false, chunks, totalBytes, bytesRead: () => bytesRead, sizeHint: totalBytes };
}

/** Options of {@link readUserStream}. */
export interface StreamReadOptions extends FieldOptions {
  /** The format; default: from `formatName`, else the content ({@link detectFormat}). */
  format?: InputFormat;
  /** The name whose extension suggests the format; default: the `file` argument. */
  formatName?: string;
  /** Expected bytes, to size the columns up front (a guess: they grow past it). */
  sizeHint?: number;
  /** Called once the format is known, before the first record is parsed. */
  onFormat?: (format: InputFormat) => void;
  /** Called after each chunk has been parsed. */
  onChunk?: () => void;
}

/** Records read before the columns are sized for the whole input from their mean size. */
const MIN_SAMPLE_ROWS = 1000;

/** Bytes of a new chunk joined to the bytes carried over from the previous one (more when the carried record is longer). */
const STITCH_BYTES = 64 << 10;

/** The index of the first byte in `bytes[from..]` that is not JSON whitespace (space, tab, CR, LF), or -1. */
function firstNonBlankByte(bytes: Uint8Array, from: number): number {
  for (let i = from; i < bytes.length; i++) {
    const b = bytes[i];
    // ' ' '\t' '\r' '\n'
    if (b !== 32 && b !== 9 && b !== 13 && b !== 10) return i;
  }
  return -1;
}

/** A failure of the byte stream itself as an IngestError when it is bad data (gzip), else the error unchanged. */
function streamError(file: string, line: number, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("Z_")) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "Z_BUF_ERROR") return new IngestError(file, line, `the gzip data is truncated (${message})`);
  return new IngestError(file, line, `not valid gzip data (${message})`);
}

/**
 * Reads user records from a byte stream into columns, validating every record; the first bad
 * one stops the read. Chunks may end anywhere (inside a record or a UTF-8 character); the bytes
 * a record left over are joined to the head of the next chunk and the rest of that chunk is
 * parsed where it lies, so a plain file's bytes are not copied. A UTF-8 byte-order mark at the
 * start is skipped; the format is decided at the first byte that is not whitespace.
 *
 * @param chunks the bytes; a chunk need only stay valid until the next one is requested.
 * @param file the name in error messages (`<stdin>` for standard input).
 * @param options format, format name, size hint, and callbacks (see {@link StreamReadOptions}).
 * @returns columns of length n (records in input order); n is 0 for an empty or blank input.
 * @throws IngestError (`file:line: reason`) for the first bad record in input order (see
 *   {@link readUsers}), or for gzip data that is corrupt or truncated (on the line reached);
 *   other errors of the stream unchanged.
 */
export async function readUserStream(chunks: AsyncIterable<Uint8Array>, file: string, options: StreamReadOptions = {}): Promise<RawColumns> {
  const columns = new ColumnsBuilder(file, { exclude: options.exclude });
  const sizeHint = options.sizeHint;
  // Once the first records tell their mean size, the columns are sized for the whole input.
  let sized = sizeHint === undefined;
  const formatName = options.formatName ?? file;
  // Set by `feed` once the format is known (declared so that the checker does not narrow it to null).
  let consumer = null as ByteConsumer | null;
  let bomChecked = false;
  // Bytes not consumed yet, carried over from earlier chunks (a copy): pending[0 .. carried).
  let pending = Buffer.allocUnsafe(STITCH_BYTES);
  let carried = 0;
  // After an offer that did not get past the carried bytes (a record longer than what came so
  // far), the next offer waits until they have doubled: a long record is rescanned O(log) times.
  let offerAt = 0;
  // Input offset of the first byte not consumed yet.
  let offset = 0;

  /** Offers `bytes` (starting at the first unconsumed byte) to the consumer; returns how many it consumed. */
  const feed = (bytes: Buffer, final: boolean): number => {
    let start = 0;
    if (consumer === null) {
      if (!bomChecked) {
        if (bytes.length < 3 && !final) return 0;
        bomChecked = true;
        // Skip a UTF-8 byte-order mark (EF BB BF).
        if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
      }
      // Wait for the first character that is not whitespace: it tells the format.
      if (!final && firstNonBlankByte(bytes, start) < 0) return start;
      const format = options.format ?? detectFormat(formatName, bytes.toString("utf8", start, Math.min(bytes.length, start + 4096)));
      consumer =
        format === "ndjson"
          ? ndjsonConsumer(file, columns)
          : textConsumer(file, format === "json" ? jsonArrayParser(file, columns) : csvParser(file, columns, { delimiter: options.delimiter, key: options.key }));
      options.onFormat?.(format);
    }
    return start + consumer.consume(start === 0 ? bytes : bytes.subarray(start), final, offset + start);
  };

  /** Makes `pending` hold at least `size` bytes, keeping its first `carried`. */
  const reservePending = (size: number): void => {
    if (pending.length >= size) return;
    const grown = Buffer.allocUnsafe(Math.max(size, pending.length * 2));
    pending.copy(grown, 0, 0, carried);
    pending = grown;
  };

  /** Parses what `chunk` completes; keeps a copy of what is left over. */
  const take = (chunk: Buffer): void => {
    let from = 0;
    // The consumer needs a record's bytes in one piece: join the carried bytes to the chunk's head.
    while (carried > 0 && from < chunk.length) {
      const size = Math.min(chunk.length - from, Math.max(STITCH_BYTES, carried));
      const total = carried + size;
      reservePending(total);
      chunk.copy(pending, carried, from, from + size);
      if (total < offerAt) {
        carried = total;
        from += size;
        continue;
      }
      const used = feed(pending.subarray(0, total), false);
      offset += used;
      if (used >= carried) {
        // Consumed past the carried bytes: the chunk goes on from the first unconsumed byte.
        from += used - carried;
        carried = 0;
        offerAt = 0;
      } else {
        // Still inside the carried record: keep all of it, with the bytes just joined.
        if (used > 0) pending.copyWithin(0, used, total);
        carried = total - used;
        from += size;
        offerAt = 2 * carried;
      }
    }
    if (from < chunk.length) {
      const rest = from === 0 ? chunk : chunk.subarray(from);
      const used = feed(rest, false);
      offset += used;
      const left = rest.length - used;
      reservePending(left);
      rest.copy(pending, 0, used);
      carried = left;
    }
  };

  const iterator = chunks[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw streamError(file, consumer?.line() ?? 1, error);
      }
      if (next.done) break;
      const chunk = next.value;
      if (chunk.length === 0) continue;
      take(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      if (!sized && columns.rows >= MIN_SAMPLE_ROWS) {
        sized = true;
        // rows in all ≈ the input's bytes over the mean bytes a record so far, and a twentieth more
        columns.expectRows(Math.ceil(((sizeHint as number) / Math.max(1, offset)) * columns.rows * 1.05));
      }
      options.onChunk?.();
    }
    feed(pending.subarray(0, carried), true);
    carried = 0;
    consumer?.finish();
    return columns.finish();
  } catch (error) {
    // The first bad record in input order: a duplicate key on an earlier line wins.
    if (error instanceof IngestError && options.key !== undefined) {
      const key = columns.lookup(options.key);
      const found = key ? rawKeyDuplicate(key, columns.rows) : null;
      if (found !== null && columns.lines[found.duplicate.index] < error.line) {
        throw new IngestError(file, columns.lines[found.duplicate.index], duplicateKeyReason(found.value, columns.lines[found.duplicate.firstIndex]));
      }
    }
    throw error;
  } finally {
    // Closes the file (or stops the stream) when the read stopped early; nothing to do after the end.
    try {
      await iterator.return?.();
    } catch {}
  }
}

/**
 * Reads the records of `path` into raw columns, every field one, validating every record; the
 * first bad one stops the read. `path` is a file, a `.gz` file (gunzipped while read) or `-` for
 * standard input ({@link openInput}). The format is `options.format`, else it comes from the
 * extension (for `.gz`, the one before it) with a content sniff as fallback ({@link detectFormat});
 * a plain file is read in chunks of `options.chunkBytes` (default {@link READ_CHUNK_BYTES}), and
 * only the columns plus about one chunk are held.
 *
 * @param onProgress called after each chunk with the bytes taken from the input so far and its
 *   size in bytes (both compressed for gzip; the size is undefined for standard input).
 * @param options `chunkBytes`: bytes per read (default 8 MiB); `format`: the format, overriding
 *   detection; `onFormat`: told the format once it is known, and whether the input is gunzipped;
 *   `exclude`, `key`, `delimiter`: see {@link FieldOptions}.
 * @returns the fields as raw columns of n rows (records in input order); n is 0 for an empty or
 *   blank input (`snapshot build` refuses that unless an empty table is allowed: build-file.ts).
 * @throws InputError when the input cannot be read at all (missing, a directory…); IngestError
 *   (`file:line: reason`, file `<stdin>` for `-`) for the first bad record in input order:
 *   malformed JSON, a record that is not an object, a field name that is not a column id, more
 *   than {@link MAX_COLUMNS} columns, a value over {@link MAX_VALUE_BYTES} bytes, a JSON number a
 *   double would round, a lone surrogate, invalid UTF-8, a CSV header that names a field twice or
 *   lacks the key, a CSV row of the wrong width, an unterminated quote, corrupt or truncated gzip
 *   data — or a duplicate key on an earlier line than that record. Other I/O errors as thrown.
 */
export async function readUsers(
  path: string,
  onProgress?: (bytesRead: number, totalBytes: number | undefined) => void,
  options: ReadOptions = {},
): Promise<RawColumns> {
  const source = await openInput(path, { chunkBytes: options.chunkBytes });
  const onFormat = options.onFormat;
  const columns = await readUserStream(source.chunks, source.file, {
    format: options.format,
    formatName: source.formatName,
    sizeHint: source.sizeHint,
    exclude: options.exclude,
    key: options.key,
    delimiter: options.delimiter,
    onFormat: onFormat === undefined ? undefined : (format) => onFormat({ file: source.file, format, gzip: source.gzip }),
    onChunk: onProgress === undefined ? undefined : () => onProgress(source.bytesRead(), source.totalBytes),
  });
  onProgress?.(source.bytesRead(), source.totalBytes);
  return columns;
}
