/**
 * Reading one member of a stored record without parsing the whole record: records are
 * `{"<id0>":<v0>,"<id1>":<v1>,…}` with every column in schema order and no white space
 * (store/records.ts), so member i is found by skipping i members, each skipped by scanning its
 * key string and its value (a string, a number or literal, or a nested array or object of the
 * `json` kind) byte by byte. What a live replica reads a base row's text value with
 * (docs/live-replicas.md "Rank²"), in about a tenth of the time `JSON.parse` takes for the record.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** The index just after the JSON string that starts (with its quote) at `at`. */
function skipString(bytes: Uint8Array, at: number): number {
  let i = at + 1;
  for (;;) {
    const b = bytes[i];
    if (b === QUOTE) return i + 1;
    i += b === BACKSLASH ? 2 : 1;
  }
}

/** The index just after the JSON value that starts at `at` (no white space: records have none). */
function skipValue(bytes: Uint8Array, at: number): number {
  const b = bytes[at];
  if (b === QUOTE) return skipString(bytes, at);
  if (b === OPEN_BRACE || b === OPEN_BRACKET) {
    let depth = 0;
    let i = at;
    for (;;) {
      const c = bytes[i];
      if (c === QUOTE) {
        i = skipString(bytes, i);
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
  }
  // a number or a literal: up to the next member separator or the record's end
  let i = at;
  while (bytes[i] !== COMMA && bytes[i] !== CLOSE_BRACE) i++;
  return i;
}

/**
 * Where member `index` (0-based, schema order) of the record `bytes[start .. end)` holds its
 * value: `[from, to)` in bytes.
 * @throws Error when the record has fewer members (a corrupt store)
 */
export function memberSpan(bytes: Uint8Array, start: number, end: number, index: number): { from: number; to: number } {
  let at = start + 1;
  for (let m = 0; ; m++) {
    if (at >= end || bytes[at - 1] === CLOSE_BRACE) throw new Error(`corrupt store: a record has no member ${index}`);
    at = skipString(bytes, at);
    if (bytes[at] !== COLON) throw new Error("corrupt store: a record's member has no value");
    const from = at + 1;
    const to = skipValue(bytes, from);
    if (m === index) return { from, to };
    at = to + 1;
  }
}

/**
 * The JSON value `bytes[from .. to)` decoded: a string without escapes straight from its bytes,
 * anything else through `JSON.parse`.
 */
export function decodeValue(bytes: Uint8Array, from: number, to: number): unknown {
  if (bytes[from] === QUOTE) {
    let plain = true;
    for (let i = from + 1; i < to - 1; i++) {
      if (bytes[i] === BACKSLASH) {
        plain = false;
        break;
      }
    }
    if (plain) return decoder.decode(bytes.subarray(from + 1, to - 1));
  }
  return JSON.parse(decoder.decode(bytes.subarray(from, to)));
}

/**
 * Where every member of the record `bytes[start .. end)` holds its value, in one pass:
 * member i's value is `bytes[spans[2i] .. spans[2i + 1])`.
 * @param spans room for 2 × the record's members
 * @throws Error when the record has fewer members than `spans` has room for (a corrupt store)
 */
export function memberSpans(bytes: Uint8Array, start: number, end: number, spans: Uint32Array): void {
  let at = start + 1;
  const members = spans.length >>> 1;
  for (let m = 0; m < members; m++) {
    if (at >= end) throw new Error(`corrupt store: a record has no member ${m}`);
    at = skipString(bytes, at);
    if (bytes[at] !== COLON) throw new Error("corrupt store: a record's member has no value");
    const from = at + 1;
    const to = skipValue(bytes, from);
    spans[2 * m] = from;
    spans[2 * m + 1] = to;
    at = to + 1;
  }
}
