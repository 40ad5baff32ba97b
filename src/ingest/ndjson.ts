/**
 * The NDJSON reader (read.ts): one JSON object a line. A line that is a flat object — string,
 * number, boolean and null members, and objects or arrays as members — is read straight from the
 * bytes ({@link ndjsonConsumer}): strings are copied (and unescaped) into their columns as UTF-8
 * without a JS string, numbers parsed from their digits, member names matched against the
 * previous line's as bytes. Any line that does not fit that path (a member seen for the first
 * time, a repeated member, a lone surrogate escape, malformed JSON…) is undone and goes through
 * JSON.parse and the shared record validation (records.ts `addJsonRecord`), so every valid JSON
 * object is read the same either way and every error is found.
 */
import { isUtf8 } from "node:buffer";
import { MAX_EXACT_INTEGER, isExactLiteral } from "../schema/values.ts";
import { MAX_VALUE_BYTES } from "./limits.ts";
import { growStringBytes, padNulls, profileRow, reserveString, rollBack, roomFor } from "./raw-column.ts";
import { RAW, type RawColumn } from "../schema/raw-column.ts";
import { type ByteConsumer, type ColumnsBuilder, IngestError, addJsonRecord, firstInvalidUtf8, invalidUtf8Reason, isBlank, parseErrorText, valueTooLongReason } from "./records.ts";

const utf8 = new TextEncoder();

/** What {@link ndjsonConsumer}'s member reading returns when the object ends. */
const LINE_END = -2;

/** Powers of ten a double holds exactly: 10^0 … 10^22. */
const EXACT_POWERS = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** Most significant digits the fast number path accumulates: below 10^15 < 2^53, the mantissa is exact. */
const MAX_FAST_DIGITS = 15;

/** A Buffer with Node's `latin1Slice` (not in the type declarations): an ASCII run as a string, no decoder. */
type Latin1Sliceable = Buffer & { latin1Slice(from: number, to: number): string };

/** True when `bytes[from .. to)` equals `key`. */
function sameBytes(key: Uint8Array, bytes: Uint8Array, from: number, to: number): boolean {
  const length = key.length;
  if (length !== to - from) return false;
  for (let k = 0; k < length; k++) if (bytes[from + k] !== key[k]) return false;
  return true;
}

/**
 * The index in `known` (the distinct values a profile tracks, as UTF-8) of the value
 * `bytes[from .. to)`, or -1: the value at `last` is compared first, then each of the others.
 */
function distinctIndex(known: Uint8Array[], last: number, bytes: Uint8Array, from: number, to: number): number {
  const length = to - from;
  for (let i = 0; i < known.length; i++) {
    const k = i === 0 ? last : i <= last ? i - 1 : i;
    const value = known[k];
    if (value.length !== length) continue;
    let same = true;
    for (let b = 0; same && b < length; b++) same = value[b] === bytes[from + b];
    if (same) return k;
  }
  return -1;
}

/** The index of the first byte at or after `p` (before `end`) that is not JSON whitespace other than LF. */
function skipBlanks(bytes: Uint8Array, p: number, end: number): number {
  while (p < end) {
    const b = bytes[p];
    // ' ' '\t' '\r'
    if (b !== 32 && b !== 9 && b !== 13) return p;
    p++;
  }
  return p;
}

/** The value of a hex digit byte, or -1. */
function hexValue(b: number): number {
  if (b >= 48 && b <= 57) return b - 48;
  if (b >= 97 && b <= 102) return b - 87;
  if (b >= 65 && b <= 70) return b - 55;
  return -1;
}

/** The code unit of the 4 hex digits at `bytes[p..p+4)` (before `end`), or -1. */
function hex4(bytes: Uint8Array, p: number, end: number): number {
  if (p + 4 > end) return -1;
  const a = hexValue(bytes[p]);
  const b = hexValue(bytes[p + 1]);
  const c = hexValue(bytes[p + 2]);
  const d = hexValue(bytes[p + 3]);
  if ((a | b | c | d) < 0) return -1;
  return (a << 12) | (b << 8) | (c << 4) | d;
}

/**
 * The end of the JSON number at `bytes[p]` (the index after its last byte), or -1 when it is not
 * in the JSON number grammar (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
 */
function scanNumber(bytes: Uint8Array, p: number, end: number): number {
  // '-'
  if (bytes[p] === 45) p++;
  let b = bytes[p];
  // '0', or '1'..'9' then digits
  if (b === 48) p++;
  else if (b >= 49 && b <= 57) {
    do b = bytes[++p];
    while (p < end && b >= 48 && b <= 57);
  } else return -1;
  if (p < end && bytes[p] === 46) {
    // '.' and at least one digit
    const first = ++p;
    while (p < end && bytes[p] >= 48 && bytes[p] <= 57) p++;
    if (p === first) return -1;
  }
  if (p < end && (bytes[p] === 101 || bytes[p] === 69)) {
    // 'e' or 'E', a sign, at least one digit
    p++;
    if (p < end && (bytes[p] === 43 || bytes[p] === 45)) p++;
    const first = p;
    while (p < end && bytes[p] >= 48 && bytes[p] <= 57) p++;
    if (p === first) return -1;
  }
  if (p > end) return -1;
  // a digit right after a leading '0' ("01") is not JSON
  b = bytes[p];
  if (p < end && b >= 48 && b <= 57) return -1;
  return p;
}

/** The value of the number {@link readNumber} read last. */
let numberRead = 0;

/**
 * Reads the JSON number at `bytes[p]` in one pass, checking its grammar
 * (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`) and leaving its value in
 * {@link numberRead}, exactly as JSON.parse reads it: the digits are accumulated while the
 * mantissa stays below 10^15 and scaled by one exact power of ten (a single correctly rounded
 * operation); anything longer is read by Number.
 * @returns the index after the number, or -1 when it is not in the grammar
 */
function readNumber(bytes: Latin1Sliceable, p: number, end: number): number {
  let q = p;
  const negative = bytes[q] === 45;
  if (negative) q++;
  let b = bytes[q];
  let mantissa = 0;
  let digits = 0;
  let scale = 0;
  if (b === 48) {
    b = bytes[++q];
    // "01" is not JSON
    if (q < end && b >= 48 && b <= 57) return -1;
  } else if (b >= 49 && b <= 57) {
    do {
      mantissa = mantissa * 10 + (b - 48);
      digits++;
      b = bytes[++q];
    } while (q < end && b >= 48 && b <= 57);
  } else return -1;
  if (q < end && b === 46) {
    // '.' and at least one digit
    const first = ++q;
    b = bytes[q];
    while (q < end && b >= 48 && b <= 57) {
      mantissa = mantissa * 10 + (b - 48);
      digits++;
      scale--;
      b = bytes[++q];
    }
    if (q === first) return -1;
  }
  if (q < end && (b === 101 || b === 69)) {
    // 'e' or 'E', a sign, at least one digit
    b = bytes[++q];
    let sign = 1;
    if (b === 45 || b === 43) {
      if (b === 45) sign = -1;
      b = bytes[++q];
    }
    const first = q;
    let exponent = 0;
    while (q < end && b >= 48 && b <= 57) {
      if (exponent < 100_000) exponent = exponent * 10 + (b - 48);
      b = bytes[++q];
    }
    if (q === first) return -1;
    scale += sign * exponent;
  }
  if (digits > MAX_FAST_DIGITS || scale > 22 || scale < -22) numberRead = Number(bytes.latin1Slice(p, q));
  else {
    const value = scale >= 0 ? mantissa * EXACT_POWERS[scale] : mantissa / EXACT_POWERS[-scale];
    numberRead = negative ? -value : value;
  }
  return q;
}

/**
 * The end of the object or array that starts at `bytes[p]` (the index after its closing bracket),
 * found by counting brackets outside strings; -1 when the line ends first. Its JSON is checked
 * by whoever parses it.
 */
function scanNested(bytes: Uint8Array, p: number, end: number): number {
  let depth = 0;
  while (p < end) {
    const b = bytes[p++];
    if (b === 34) {
      // a string: to its closing quote, skipping escapes
      while (p < end) {
        const c = bytes[p++];
        if (c === 34) break;
        if (c === 92) p++;
      }
    } else if (b === 123 || b === 91) depth++;
    else if (b === 125 || b === 93) {
      if (--depth === 0) return p;
    }
  }
  return -1;
}

/** Deepest nesting read from the bytes; deeper values go through JSON.parse. */
const MAX_CANONICAL_DEPTH = 32;

/** Most significant digits of a number copied as it is (a double holds any 15-digit decimal exactly, and writes it back the same). */
const MAX_CANONICAL_DIGITS = 15;

/**
 * Member names of the objects being scanned ({@link canonicalValue}), as byte ranges, innermost
 * object last: a name that repeats within one object makes the value not canonical.
 */
const nameFrom = new Int32Array(1024);
const nameTo = new Int32Array(1024);

/**
 * The end of the JSON string at `bytes[p]` when it is written as JSON.stringify writes it: no
 * escape but `\"`, `\\`, the five short ones and `\u00xx` (lower-case) for the other control
 * characters. -1 otherwise (not JSON, or another spelling of the same string).
 */
function canonicalString(bytes: Uint8Array, p: number, end: number): number {
  p++;
  while (p < end) {
    const c = bytes[p++];
    if (c === 34) return p;
    if (c < 0x20) return -1;
    if (c !== 92) continue;
    const e = bytes[p++];
    // " \ b f n r t
    if (e === 34 || e === 92 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) continue;
    // u00 and two lower-case hex digits of a control character without a short escape
    if (e !== 117 || bytes[p] !== 48 || bytes[p + 1] !== 48) return -1;
    const high = bytes[p + 2];
    const low = bytes[p + 3];
    if (high !== 48 && high !== 49) return -1;
    const lowValue = low >= 48 && low <= 57 ? low - 48 : low >= 97 && low <= 102 ? low - 87 : -1;
    if (lowValue < 0) return -1;
    const code = (high - 48) * 16 + lowValue;
    if (code === 8 || code === 9 || code === 10 || code === 12 || code === 13) return -1;
    p += 4;
  }
  return -1;
}

/**
 * The end of the JSON number at `bytes[p]` when String(Number(text)) gives the same text back:
 * no exponent, at most {@link MAX_CANONICAL_DIGITS} significant digits, no `-0`, no trailing zero
 * in a fraction, and no more than five zeros after `0.` (smaller numbers are written with an
 * exponent). -1 otherwise.
 */
function canonicalNumber(bytes: Uint8Array, p: number, end: number): number {
  const to = scanNumber(bytes, p, end);
  if (to < 0) return -1;
  let q = p;
  const negative = bytes[q] === 45;
  if (negative) q++;
  let digits = 0;
  const intFrom = q;
  while (q < to && bytes[q] >= 48 && bytes[q] <= 57) q++;
  const zeroInteger = q - intFrom === 1 && bytes[intFrom] === 48;
  if (!zeroInteger) digits = q - intFrom;
  if (q === to) return negative && zeroInteger ? -1 : digits <= MAX_CANONICAL_DIGITS ? to : -1;
  // '.'; an exponent is never canonical
  if (bytes[q] !== 46) return -1;
  q++;
  const fractionFrom = q;
  while (q < to && bytes[q] >= 48 && bytes[q] <= 57) q++;
  if (q !== to || bytes[to - 1] === 48) return -1;
  if (zeroInteger) {
    let zeros = 0;
    while (bytes[fractionFrom + zeros] === 48) zeros++;
    if (zeros > 5) return -1;
    digits = to - fractionFrom - zeros;
  } else digits += to - fractionFrom;
  return digits <= MAX_CANONICAL_DIGITS ? to : -1;
}

/**
 * The end of the JSON value at `bytes[p]` when it is valid JSON written exactly as
 * `JSON.stringify(JSON.parse(text))` would write it — compact, canonical strings and numbers, no
 * member named twice in an object, no member name that starts with a digit (array-index names
 * are reordered) — so that its bytes can be kept as they are. -1 otherwise (then JSON.parse
 * decides). `names` is the first free slot of the member-name stack.
 */
function canonicalValue(bytes: Uint8Array, p: number, end: number, depth: number, names: number): number {
  const c = bytes[p];
  if (c === 34) return canonicalString(bytes, p, end);
  if (c === 45 || (c >= 48 && c <= 57)) return canonicalNumber(bytes, p, end);
  if (c === 123) {
    // '{': members "member":value separated by ','
    if (depth === MAX_CANONICAL_DEPTH) return -1;
    p++;
    if (bytes[p] === 125) return p + 1;
    let top = names;
    for (;;) {
      if (bytes[p] !== 34) return -1;
      const from = p + 1;
      const q = canonicalString(bytes, p, end);
      if (q < 0) return -1;
      const to = q - 1;
      const first = bytes[from];
      if (first >= 48 && first <= 57) return -1;
      for (let k = names; k < top; k++) {
        if (nameTo[k] - nameFrom[k] !== to - from) continue;
        let same = true;
        for (let i = 0; same && i < to - from; i++) same = bytes[nameFrom[k] + i] === bytes[from + i];
        if (same) return -1;
      }
      if (top === nameFrom.length) return -1;
      nameFrom[top] = from;
      nameTo[top] = to;
      top++;
      // ':'
      if (bytes[q] !== 58) return -1;
      p = canonicalValue(bytes, q + 1, end, depth + 1, top);
      if (p < 0) return -1;
      if (bytes[p] === 44) p++;
      else if (bytes[p] === 125) return p + 1;
      else return -1;
    }
  }
  if (c === 91) {
    // '[': values separated by ','
    if (depth === MAX_CANONICAL_DEPTH) return -1;
    p++;
    if (bytes[p] === 93) return p + 1;
    for (;;) {
      p = canonicalValue(bytes, p, end, depth + 1, names);
      if (p < 0) return -1;
      if (bytes[p] === 44) p++;
      else if (bytes[p] === 93) return p + 1;
      else return -1;
    }
  }
  return literalEnd(bytes, p, end);
}

/**
 * The end of the JSON string whose opening quote is at `bytes[p]` (the index after its closing
 * quote), checking its escapes and that it holds no control character; -1 otherwise. For members
 * that are left out: their value is not kept, but the line must still be JSON.
 */
function skipString(bytes: Uint8Array, p: number, end: number): number {
  p++;
  while (p < end) {
    const c = bytes[p++];
    if (c === 34) return p;
    if (c < 0x20) return -1;
    if (c === 92) {
      const e = bytes[p++];
      if (e === 117) {
        if (hex4(bytes, p, end) < 0) return -1;
        p += 4;
      } else if (e !== 34 && e !== 92 && e !== 47 && e !== 98 && e !== 102 && e !== 110 && e !== 114 && e !== 116) return -1;
    }
  }
  return -1;
}

/** The end of the scalar JSON value at `bytes[p]` that is not kept, or -1 (an object or array, or not JSON: the general path decides). */
function skipValue(bytes: Uint8Array, p: number, end: number): number {
  const b = bytes[p];
  if (b === 34) return skipString(bytes, p, end);
  if (b === 45 || (b >= 48 && b <= 57)) return scanNumber(bytes, p, end);
  return literalEnd(bytes, p, end);
}

/** `true`, `false`, `null` as bytes. */
const TRUE = new TextEncoder().encode("true");
const FALSE = new TextEncoder().encode("false");
const NULL = new TextEncoder().encode("null");

/** The end of the literal `true`, `false` or `null` at `bytes[p]`, or -1. */
function literalEnd(bytes: Uint8Array, p: number, end: number): number {
  const b = bytes[p];
  const literal = b === 116 ? TRUE : b === 102 ? FALSE : b === 110 ? NULL : null;
  if (literal === null || p + literal.length > end) return -1;
  for (let k = 1; k < literal.length; k++) if (bytes[p + k] !== literal[k]) return -1;
  return p + literal.length;
}

/**
 * Copies the JSON string whose opening quote is at `source[p]` into the column as the value of
 * `row` (its room made), unescaping it to UTF-8, and sets its tag and string end. `end` bounds
 * the bytes that may be read (the line's LF, which no JSON string holds, stops the copy first).
 * @returns the index after the closing quote; -1 at a control character (the line's end
 *   included), a bad escape, a lone surrogate escape (the general path reports it) or `end`
 */
function copyString(column: RawColumn, row: number, source: Uint8Array, p: number, end: number): number {
  let bytes = column.strings.bytes;
  let at = column.strings.offsets[row];
  let q = p + 1;
  // source bytes that may be copied before the column's room runs out (one byte of output each)
  let limit = Math.min(end, q + bytes.length - at);
  // the plain run (inlined for speed: most strings have no escape)
  for (;;) {
    if (q >= limit) {
      if (q >= end) return -1;
      growStringBytes(column, at, at + Math.min(end - q, bytes.length));
      bytes = column.strings.bytes;
      limit = Math.min(end, q + bytes.length - at);
      continue;
    }
    const c = source[q++];
    if (c === 34) {
      column.tags[row] = RAW.STRING;
      column.strings.offsets[row + 1] = at;
      return q;
    }
    if (c === 92 || c < 0x20) break;
    bytes[at++] = c;
  }
  q--;
  if (source[q] < 0x20) return -1;
  // an escape: room for the rest of the line, which the unescaped string cannot outgrow
  let lineEnd = (source as Buffer).indexOf(10, q);
  if (lineEnd < 0 || lineEnd > end) lineEnd = end;
  growStringBytes(column, at, at + (lineEnd - q));
  return copyEscaped(column, row, source, q, lineEnd, at);
}

/**
 * {@link copyString} from a backslash or control character at `source[q]` on, with `at` the end
 * of what was copied so far.
 */
function copyEscaped(column: RawColumn, row: number, source: Uint8Array, q: number, end: number, at: number): number {
  const bytes = column.strings.bytes;
  let p = q;
  while (p < end) {
    const c = source[p++];
    if (c === 34) {
      column.tags[row] = RAW.STRING;
      column.strings.offsets[row + 1] = at;
      return p;
    }
    if (c >= 0x20 && c !== 92) {
      bytes[at++] = c;
      continue;
    }
    if (c < 0x20 || p >= end) return -1;
    // an escape: '\' and one of " \ / b f n r t, or uXXXX
    const e = source[p++];
    if (e === 34 || e === 92 || e === 47) bytes[at++] = e;
    else if (e === 110) bytes[at++] = 10;
    else if (e === 116) bytes[at++] = 9;
    else if (e === 114) bytes[at++] = 13;
    else if (e === 98) bytes[at++] = 8;
    else if (e === 102) bytes[at++] = 12;
    else if (e === 117) {
      let cp = hex4(source, p, end);
      if (cp < 0) return -1;
      p += 4;
      if (cp >= 0xd800 && cp <= 0xdfff) {
        // a surrogate pair written as two escapes; a lone one is refused by the general path
        if (cp > 0xdbff || source[p] !== 92 || source[p + 1] !== 117) return -1;
        const low = hex4(source, p + 2, end);
        if (low < 0xdc00 || low > 0xdfff) return -1;
        p += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      }
      if (cp < 0x80) bytes[at++] = cp;
      else if (cp < 0x800) {
        bytes[at++] = 0xc0 | (cp >> 6);
        bytes[at++] = 0x80 | (cp & 0x3f);
      } else if (cp < 0x10000) {
        bytes[at++] = 0xe0 | (cp >> 12);
        bytes[at++] = 0x80 | ((cp >> 6) & 0x3f);
        bytes[at++] = 0x80 | (cp & 0x3f);
      } else {
        bytes[at++] = 0xf0 | (cp >> 18);
        bytes[at++] = 0x80 | ((cp >> 12) & 0x3f);
        bytes[at++] = 0x80 | ((cp >> 6) & 0x3f);
        bytes[at++] = 0x80 | (cp & 0x3f);
      }
    } else return -1;
  }
  return -1;
}

/**
 * NDJSON: one JSON object per line; blank (whitespace-only) lines are skipped. Lines are read
 * straight from the bytes where they fit (see the module comment), else decoded and JSON.parse'd,
 * so every valid JSON object is accepted and every error is found, on its line.
 */
export function ndjsonConsumer(file: string, columns: ColumnsBuilder): ByteConsumer {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let line = 1;
  // Per member position, the bytes before its value on an earlier line (`{"id":`, `,"title":`)
  // and its column (null: left out): a line of the same shape matches them byte for byte, with
  // no JS string for a name.
  const shapeSeparators: Uint8Array[] = [];
  const shapeColumns: (RawColumn | null)[] = [];
  // The columns the line being read has written to, in member order; and those of them whose
  // value is profiled once the line is known to be good.
  const touched: RawColumn[] = [];
  const pendingColumns: RawColumn[] = [];

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
   * Reads the value at `bytes[p]` into `column` as the value of `row` (its room made): its tag,
   * number and string end.
   * @returns the index after the value, or -1 when the general path must read the line
   */
  const readValue = (column: RawColumn, row: number, bytes: Latin1Sliceable, p: number, end: number): number => {
    const b = bytes[p];
    if (b === 34) return copyString(column, row, bytes, p, end);
    if (b === 45 || (b >= 48 && b <= 57)) {
      const to = readNumber(bytes, p, end);
      if (to < 0) return -1;
      const x = numberRead;
      // beyond ±2^53: kept only when its literal is exact; the general path says why not
      if ((x >= MAX_EXACT_INTEGER || x <= -MAX_EXACT_INTEGER) && !isExactLiteral(bytes.latin1Slice(p, to), x)) return -1;
      column.tags[row] = RAW.NUMBER;
      column.numbers[row] = x;
      column.strings.offsets[row + 1] = column.strings.offsets[row];
      return to;
    }
    if (b === 123 || b === 91) {
      // '{' '[': an object or array, kept as its compact JSON text (what JSON.stringify writes):
      // copied as it is when it is written so already, else parsed and written again
      const same = canonicalValue(bytes, p, end, 0, 0);
      if (same > 0) {
        reserveString(column, same - p);
        const at = column.strings.offsets[row];
        const target = column.strings.bytes;
        for (let k = p; k < same; k++) target[at + k - p] = bytes[k];
        column.tags[row] = RAW.OBJECT;
        column.strings.offsets[row + 1] = at + same - p;
        return same;
      }
      // not written as JSON.stringify would: bounded by the line's LF, parsed and written again
      let stop = bytes.indexOf(10, p);
      if (stop < 0 || stop > end) stop = end;
      const to = scanNested(bytes, p, stop);
      if (to < 0) return -1;
      let text: string;
      try {
        text = JSON.stringify(JSON.parse(bytes.toString("utf8", p, to)));
      } catch {
        return -1;
      }
      // UTF-8 takes at most 3 bytes per UTF-16 code unit
      reserveString(column, text.length * 3);
      const at = column.strings.offsets[row];
      const { written } = utf8.encodeInto(text, column.strings.bytes.subarray(at));
      column.tags[row] = RAW.OBJECT;
      column.strings.offsets[row + 1] = at + written;
      return to;
    }
    const to = literalEnd(bytes, p, end);
    if (to < 0) return -1;
    if (b === 116 || b === 102) {
      column.tags[row] = RAW.BOOLEAN;
      column.numbers[row] = b === 116 ? 1 : 0;
    } else column.tags[row] = RAW.NULL;
    column.strings.offsets[row + 1] = column.strings.offsets[row];
    return to;
  };

  // Where the line read last by the fast path ends: its LF, or the end of the data.
  let lineEnd = 0;

  /** True when only blanks follow `p` up to the line's LF or `end`; sets {@link lineEnd}. */
  const atLineEnd = (bytes: Uint8Array, p: number, end: number): boolean => {
    const q = skipBlanks(bytes, p, end);
    if (q !== end && bytes[q] !== 10) return false;
    lineEnd = q;
    return true;
  };

  /**
   * The general reading of the punctuation and name before member `member`'s value, from `p`
   * (the line's start, or the end of the previous value): `{` or `,`, the quoted name, `:`, with
   * blanks anywhere between. Records those bytes as the member's separator for the next lines.
   * @returns the index of the value's first byte; {@link LINE_END} when the object ends there
   *   (`}` and only blanks after it); -1 for the general path (a name never seen, not JSON…)
   */
  const memberStart = (bytes: Latin1Sliceable, p: number, end: number, member: number): number => {
    let q = skipBlanks(bytes, p, end);
    // '{' before the first member, ',' before the others; '}' ends the object
    const open = bytes[q];
    if (open === 125 && member > 0) return atLineEnd(bytes, q + 1, end) ? LINE_END : -1;
    if (open !== (member === 0 ? 123 : 44)) return -1;
    q = skipBlanks(bytes, q + 1, end);
    if (member === 0 && bytes[q] === 125) return atLineEnd(bytes, q + 1, end) ? LINE_END : -1;
    // '"': a member name, ASCII without escapes (a column id, or a field left out)
    if (bytes[q] !== 34) return -1;
    const keyFrom = q + 1;
    let k = keyFrom;
    while (k < end) {
      const c = bytes[k];
      if (c === 34 || c === 92 || c < 0x20 || c >= 0x80) break;
      k++;
    }
    if (k >= end || bytes[k] !== 34) return -1;
    // a field not seen before: the general path makes its column
    const found = columns.lookup(bytes.latin1Slice(keyFrom, k));
    if (found === undefined) return -1;
    q = skipBlanks(bytes, k + 1, end);
    // ':'
    if (bytes[q] !== 58) return -1;
    q = skipBlanks(bytes, q + 1, end);
    // a copy: `bytes` is a Buffer, whose slice is a view of memory the next chunk reuses
    shapeSeparators[member] = Uint8Array.prototype.slice.call(bytes, p, q);
    shapeColumns[member] = found;
    return q;
  };

  /**
   * Rows every column has room for (tags, numbers, string offsets), so that the fast path need
   * not check each value; 0 after the general path, which may have made a column.
   */
  let roomRows = 0;

  /** Makes room in every column for row `row` and the next; returns the rows all have room for. */
  const makeRoomAll = (row: number): number => {
    let room = Number.MAX_SAFE_INTEGER;
    for (const column of columns.columns) room = Math.min(room, roomFor(column, Math.max(row + 2, column.tags.length)));
    return room;
  };

  /**
   * The fast path: reads the line that starts at `bytes[from]` (valid UTF-8) as a record and
   * returns the index of its LF (or `end`, the end of the data); or undoes what it wrote and
   * returns -1 for the general path. A blank line is read as nothing. The line's end is found as
   * it is read: no JSON value holds a raw LF, so every scan stops there. Each member's separator
   * (`,"title":`) is first compared, as bytes, with the one the same member had on an earlier
   * line, which says which column the value goes to. A value is counted in its column's profile
   * at once when that is only a count (a number; a string of a column that can no longer be a
   * date or a date-time, and no longer an enum or one of its values so far) and undone if the
   * line turns out not to fit; any other value is profiled once the line is known to be good.
   */
  const fastLine = (bytes: Latin1Sliceable, from: number, end: number): number => {
    if (atLineEnd(bytes, from, end)) return lineEnd;
    const row = columns.rows;
    if (row + 2 > roomRows) roomRows = makeRoomAll(row);
    let count = 0;
    let pending = 0;
    let tooLong: RawColumn | null = null;
    let p = from;
    let ok = false;
    for (let member = 0; ; member++) {
      let column: RawColumn | null;
      const separator = member < shapeSeparators.length ? shapeSeparators[member] : null;
      // inlined for speed: the separator compared byte for byte with the earlier line's
      let matched = separator !== null;
      if (separator !== null) {
        const length = separator.length;
        for (let k = 0; k < length; k++) {
          if (bytes[p + k] !== separator[k]) {
            matched = false;
            break;
          }
        }
      }
      if (matched) {
        p += (separator as Uint8Array).length;
        column = shapeColumns[member];
      } else {
        p = memberStart(bytes, p, end, member);
        if (p === LINE_END) {
          ok = true;
          break;
        }
        if (p < 0) break;
        column = shapeColumns[member];
      }
      if (column === null) {
        p = skipValue(bytes, p, end);
        if (p < 0) break;
        continue;
      }
      // a member named twice: JSON.parse keeps the last, the general path too
      if (column.count !== row) {
        if (column.count > row) break;
        padNulls(column, row);
      }
      const first = bytes[p];
      if (first === 34) {
        // '"': a string, the commonest value. Inlined for speed: a string without escapes copied
        // byte by byte; any other (an escape, a full column, not JSON) read again by copyString
        const strings = column.strings;
        const target = strings.bytes;
        const offsets = strings.offsets;
        let at = offsets[row];
        let q = p + 1;
        const limit = Math.min(end, q + target.length - at);
        let c = 0;
        for (;;) {
          if (q >= limit) {
            c = -1;
            break;
          }
          c = bytes[q++];
          if (c === 34) break;
          if (c === 92 || c < 0x20) {
            c = -1;
            break;
          }
          target[at++] = c;
        }
        if (c === 34) {
          column.tags[row] = RAW.STRING;
          offsets[row + 1] = at;
          p = q;
        } else p = copyString(column, row, bytes, p, end);
      } else if (first === 45 || (first >= 48 && first <= 57)) {
        // '-' or a digit: a number. Inlined for speed: an integer of 1 to 15 digits without a
        // leading zero read here (exact in a double); any other number by readNumber
        let to = p;
        let x = 0;
        if (first >= 49) {
          let d = first;
          do {
            x = x * 10 + (d - 48);
            d = bytes[++to];
          } while (to < end && d >= 48 && d <= 57);
          // '.', 'e', 'E' or more than 15 digits: not such an integer
          if (to - p > MAX_FAST_DIGITS || d === 46 || d === 101 || d === 69) to = -1;
        } else to = -1;
        if (to < 0) {
          to = readNumber(bytes, p, end);
          x = numberRead;
        }
        // beyond ±2^53: kept only when its literal is exact; the general path says why not
        if (to < 0 || ((x >= MAX_EXACT_INTEGER || x <= -MAX_EXACT_INTEGER) && !isExactLiteral(bytes.latin1Slice(p, to), x))) p = -1;
        else {
          column.tags[row] = RAW.NUMBER;
          column.numbers[row] = x;
          const offsets = column.strings.offsets;
          offsets[row + 1] = offsets[row];
          p = to;
        }
      } else p = readValue(column, row, bytes, p, end);
      if (p < 0) break;
      column.count = row + 1;
      column.strings.count = row + 1;
      touched[count++] = column;
      const profile = column.profile;
      const tag = column.tags[row];
      if (tag === RAW.STRING) {
        const offsets = column.strings.offsets;
        const valueFrom = offsets[row];
        const valueTo = offsets[row + 1];
        if (valueTo - valueFrom > MAX_VALUE_BYTES && tooLong === null) tooLong = column;
        // inlined for speed (profileRow's rule for these): a string of a column that can no
        // longer be a date or a date-time only counts, when the column can no longer be an enum
        // either or the string is one of the distinct values already seen
        if (profile.dates !== profile.strings && profile.datetimes !== profile.strings) {
          if (profile.distinct === null) profile.strings++;
          else {
            // the distinct value seen last compared first (inlined for speed), then the others
            const known = profile.distinctUtf8;
            const last = profile.lastDistinct;
            let same = last < known.length && known[last].length === valueTo - valueFrom;
            if (same) {
              const value = known[last];
              const target = column.strings.bytes;
              for (let b = 0; same && b < value.length; b++) same = value[b] === target[valueFrom + b];
            }
            const k = same ? last : distinctIndex(known, last, column.strings.bytes, valueFrom, valueTo);
            if (k >= 0) {
              profile.strings++;
              profile.lastDistinct = k;
              column.distinctCodes[row] = k + 1;
            } else pendingColumns[pending++] = column;
          }
        } else pendingColumns[pending++] = column;
      } else if (tag === RAW.NUMBER) profile.numbers++;
      else {
        const offsets = column.strings.offsets;
        if (offsets[row + 1] - offsets[row] > MAX_VALUE_BYTES && tooLong === null) tooLong = column;
        pendingColumns[pending++] = column;
      }
      // '}' then the line's end (inlined for speed: the commonest end of a record)
      if (bytes[p] === 125) {
        const after = p + 1;
        if (after === end || bytes[after] === 10) {
          lineEnd = after;
          ok = true;
          break;
        }
        if (atLineEnd(bytes, after, end)) {
          ok = true;
          break;
        }
      }
    }
    if (!ok) {
      // undo the counts made at once, then the values
      for (let k = 0; k < count; k++) {
        const column = touched[k];
        let counted = true;
        for (let j = 0; j < pending; j++) if (pendingColumns[j] === column) counted = false;
        if (counted) {
          if (column.tags[row] === RAW.NUMBER) column.profile.numbers--;
          else column.profile.strings--;
        }
        rollBack(column, row);
      }
      return -1;
    }
    if (tooLong !== null) {
      const offsets = tooLong.strings.offsets;
      throw new IngestError(file, line, valueTooLongReason(tooLong.id, offsets[row + 1] - offsets[row]));
    }
    for (let k = 0; k < pending; k++) profileRow(pendingColumns[k], row);
    // inlined for speed: columns.endRecord(line)
    if (row < columns.lines.length) {
      columns.lines[row] = line;
      columns.rows = row + 1;
    } else columns.endRecord(line);
    return lineEnd;
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
      const data = (stop === bytes.length ? bytes : bytes.subarray(0, stop)) as Latin1Sliceable;
      // The fast path copies bytes without decoding them, so it runs only on valid UTF-8.
      const valid = isUtf8(data);
      let from = 0;
      while (from < stop) {
        let end = valid ? fastLine(data, from, stop) : -1;
        if (end < 0) {
          end = data.indexOf(10, from);
          if (end < 0) end = stop;
          // An empty line is skipped without decoding.
          if (end > from) {
            slowLine(data, from, end, fileOffset);
            // the general path may have made a column
            roomRows = 0;
          }
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
