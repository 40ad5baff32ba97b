/**
 * The NDJSON reader (read.ts): one JSON object a line. Lines in the canonical four-field shape
 * that src/generate/users.ts writes are read straight from the bytes (names and emails copied as
 * UTF-8, no JS string); any other line goes through JSON.parse and the shared record validation.
 */
import { isUtf8 } from "node:buffer";
import { copyPlainJsonString } from "../bits/byte-column.ts";
import { type ByteConsumer, type ColumnsBuilder, IngestError, addJsonRecord, firstInvalidUtf8, invalidUtf8Reason, isBlank, parseErrorText } from "./records.ts";

// Byte sequences of the canonical NDJSON record `{"id":…,"name":"…","email":"…","status":"…"}`.
const ID_KEY = new TextEncoder().encode('{"id":');
const NAME_KEY = new TextEncoder().encode(',"name":"');
const EMAIL_KEY = new TextEncoder().encode('","email":"');
const STATUS_KEY = new TextEncoder().encode('","status":"');
const ACTIVE_END = new TextEncoder().encode('active"}');
const INACTIVE_END = new TextEncoder().encode('inactive"}');

/** True when `bytes[at..]` starts with `key`. */
function startsWithBytes(bytes: Uint8Array, at: number, key: Uint8Array): boolean {
  const length = key.length;
  for (let k = 0; k < length; k++) if (bytes[at + k] !== key[k]) return false;
  return true;
}

/**
 * NDJSON: one JSON object per line; blank (whitespace-only) lines are skipped. Lines in the
 * canonical shape this project writes (`{"id":<integer>,"name":"…","email":"…","status":"active"}`,
 * no escapes) are read straight from the bytes; any other line is decoded and JSON.parse'd, so
 * every valid JSON object is accepted and every error is found.
 */
export function ndjsonConsumer(file: string, columns: ColumnsBuilder): ByteConsumer {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let line = 1;

  /** JSON.parse of one line's text and the record's validation. */
  const textLine = (text: string): void => {
    if (isBlank(text, 0, text.length)) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new IngestError(file, line, `malformed JSON: ${parseErrorText(error)}`);
    }
    addJsonRecord(file, columns, value, line, text);
  };

  /** The general path: decode `bytes[from..to)` strictly and JSON.parse it. */
  const slowLine = (bytes: Buffer, from: number, to: number, fileOffset: number): void => {
    let text: string;
    try {
      text = decoder.decode(bytes.subarray(from, to));
    } catch {
      const sub = bytes.subarray(from, to);
      const bad = Math.max(0, firstInvalidUtf8(sub, sub.length));
      throw new IngestError(file, line, invalidUtf8Reason(sub, bad, fileOffset + from + bad));
    }
    textLine(text);
  };

  /**
   * The fast path for the canonical shape: adds the record and returns the index of the LF that
   * ends the line (or `bytes.length` at the end of the data), or -1 to take the general path.
   */
  const fastLine = (bytes: Buffer, from: number): number => {
    if (!startsWithBytes(bytes, from, ID_KEY)) return -1;
    let p = from + ID_KEY.length;
    // The id: an optional '-' and 1 to 15 digits without a leading zero (exact in a double).
    const negative = bytes[p] === 45;
    if (negative) p++;
    const digitsFrom = p;
    let id = 0;
    let d = bytes[p];
    while (d >= 48 && d <= 57) {
      id = id * 10 + (d - 48);
      d = bytes[++p];
    }
    const digits = p - digitsFrom;
    if (digits === 0 || digits > 15 || (digits > 1 && bytes[digitsFrom] === 48)) return -1;
    if (!startsWithBytes(bytes, p, NAME_KEY)) return -1;
    // Name and email are copied into the columns as they are checked, and added only once the
    // whole line is known to be canonical.
    const nameFrom = p + NAME_KEY.length;
    const nameTo = copyPlainJsonString(columns.names, bytes, nameFrom);
    if (nameTo < 0 || !startsWithBytes(bytes, nameTo, EMAIL_KEY)) return -1;
    const emailFrom = nameTo + EMAIL_KEY.length;
    const emailTo = copyPlainJsonString(columns.emails, bytes, emailFrom);
    if (emailTo < 0 || !startsWithBytes(bytes, emailTo, STATUS_KEY)) return -1;
    p = emailTo + STATUS_KEY.length;
    let code: number;
    if (startsWithBytes(bytes, p, ACTIVE_END)) {
      code = 0;
      p += ACTIVE_END.length;
    } else if (startsWithBytes(bytes, p, INACTIVE_END)) {
      code = 1;
      p += INACTIVE_END.length;
    } else return -1;
    // '\r' before the '\n' (CRLF), then the line end or the end of the data.
    if (bytes[p] === 13) p++;
    if (p !== bytes.length && bytes[p] !== 10) return -1;
    columns.addCopied(negative ? -id : id, nameTo - nameFrom, emailTo - emailFrom, code, line);
    return p;
  };

  return {
    consume(bytes, final, fileOffset) {
      let stop = bytes.length;
      if (!final) {
        // Only whole lines: up to and including the last LF.
        const lastNewline = bytes.lastIndexOf(10);
        if (lastNewline < 0) return 0;
        stop = lastNewline + 1;
      }
      const data = stop === bytes.length ? bytes : bytes.subarray(0, stop);
      // The fast path decodes without checks, so it runs only on valid UTF-8.
      const valid = isUtf8(data);
      let from = 0;
      if (valid && stop > 0) {
        const first = fastLine(data, 0);
        if (first < 0) {
          // The chunk's first line is not in the canonical shape (a wide table, say): the chunk
          // is decoded at once and split into lines (LF is one byte and one code unit), each
          // JSON.parse'd.
          const lines = decoder.decode(data).split("\n");
          const count = data[stop - 1] === 10 ? lines.length - 1 : lines.length;
          for (let i = 0; i < count; i++) {
            if (lines[i].length > 0) textLine(lines[i]);
            line++;
          }
          return stop;
        }
        line++;
        from = first + 1;
      }
      while (from < stop) {
        let end = valid ? fastLine(data, from) : -1;
        if (end < 0) {
          end = data.indexOf(10, from);
          if (end < 0) end = stop;
          // An empty line is skipped without decoding.
          if (end > from) slowLine(data, from, end, fileOffset);
        }
        line++;
        from = end + 1;
      }
      return stop;
    },
    finish() {},
    line() {
      return line;
    },
  };
}

