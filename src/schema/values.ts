/**
 * Value syntax per column kind (docs/api.md "Any users table: the schema", values): what a number,
 * a date, a date-time and a boolean look like in the input, how each is stored, and how it is
 * written back. Parsers return NaN (or -1) for a value that does not fit and never round:
 * `explain*` functions give the reason once a value is refused, so the common path allocates
 * nothing.
 *
 * Stored forms: numbers as doubles; a `date` as its day number (days since 1970-01-01, UTC);
 * a `datetime` as milliseconds since 1970-01-01T00:00:00Z; a `boolean` as 0 (false) or 1 (true).
 */

/** The JSON number grammar (RFC 8259): what a number is, in CSV too (no hex, spaces, `_`, `+`, `.5`). */
export const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** 2^53: integers of larger magnitude are not exact in a double (docs/api.md: refused, never rounded). */
export const MAX_EXACT_INTEGER = 2 ** 53;

/** Milliseconds in a day. */
export const DAY_MS = 86_400_000;

/**
 * The days from 1970-01-01 to the proleptic Gregorian date y-m-d (m 1–12, d 1–31; not checked):
 * integer arithmetic, no Date object (H. Hinnant's days_from_civil).
 */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Days in month m (1–12) of year y. */
function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/**
 * ISO 8601 date-times as docs/api.md takes them: a date, `T` or a space, `HH:mm`, optional
 * `:ss` and fraction, then `Z`, `±HH`, `±HHMM`, `±HH:MM` or nothing (UTC).
 */
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/** The number of the `count` ASCII digits of `text` at `at`, or -1 when one is not a digit. */
function digitsAt(text: string, at: number, count: number): number {
  let x = 0;
  for (let i = at; i < at + count; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    x = x * 10 + c;
  }
  return x;
}

/** The day number of y-m-d when it is a real calendar day, else NaN. */
function calendarDay(y: number, mo: number, d: number): number {
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return Number.NaN;
  return daysFromCivil(y, mo, d);
}

/** The day number of `YYYY-MM-DD` (a real calendar day, years 0000–9999), or NaN. */
export function parseDate(text: string): number {
  // Without a regex (this runs on every string of a column while it may be a date column).
  if (text.length !== 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return Number.NaN;
  const y = digitsAt(text, 0, 4);
  const mo = digitsAt(text, 5, 2);
  const d = digitsAt(text, 8, 2);
  if (mo < 0 || d < 0) return Number.NaN;
  return calendarDay(y, mo, d);
}

/** The place values of a fraction's first three digits (ms). */
const FRACTION_MS = [100, 10, 1];

/**
 * The UTC shapes read without a regex: `YYYY-MM-DDTHH:mm:ss`, an optional fraction of 1–9 digits
 * (only its first three may be non-zero: finer ones would be rounded), then `Z` (what
 * `Date.toISOString()` writes) or `+00:00` (what PostgreSQL's `row_to_json` writes for a
 * timestamptz in UTC, without the fraction when it is zero). NaN for any other text: the
 * general grammar ({@link DATETIME}) then decides, and agrees on every text this accepts.
 */
function parseIsoUtc(text: string): number {
  const length = text.length;
  if (length < 20 || text.charCodeAt(10) !== 84 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return Number.NaN;
  let end: number;
  if (text.charCodeAt(length - 1) === 90) end = length - 1;
  else if (length >= 25 && text.endsWith("+00:00")) end = length - 6;
  else return Number.NaN;
  let ms = 0;
  if (end !== 19) {
    if (end < 21 || end > 29 || text.charCodeAt(19) !== 46) return Number.NaN;
    for (let i = 20; i < end; i++) {
      const c = text.charCodeAt(i) - 48;
      if (c < 0 || c > 9) return Number.NaN;
      if (i < 23) ms += c * FRACTION_MS[i - 20];
      else if (c !== 0) return Number.NaN;
    }
  }
  const day = parseDate(text.slice(0, 10));
  const h = digitsAt(text, 11, 2);
  const mi = digitsAt(text, 14, 2);
  const s = digitsAt(text, 17, 2);
  if (Number.isNaN(day) || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59) return Number.NaN;
  return day * DAY_MS + ((h * 60 + mi) * 60 + s) * 1000 + ms;
}

/**
 * The instant of an ISO 8601 date-time (see {@link DATETIME}), in ms since the epoch, or NaN:
 * also for a fraction finer than a millisecond that is not zero (it would be rounded), a second
 * of 60, or an offset beyond ±23:59.
 */
export function parseDateTime(text: string): number {
  const fast = parseIsoUtc(text);
  if (!Number.isNaN(fast)) return fast;
  const m = DATETIME.exec(text);
  if (m === null) return Number.NaN;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const h = Number(m[4]);
  const mi = Number(m[5]);
  const s = m[6] === undefined ? 0 : Number(m[6]);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return Number.NaN;
  let ms = 0;
  const fraction = m[7];
  if (fraction !== undefined) {
    const padded = `${fraction}00`;
    ms = Number(padded.slice(0, 3));
    for (let i = 3; i < fraction.length; i++) if (fraction.charCodeAt(i) !== 48) return Number.NaN;
  }
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== "Z") {
    const digits = zone.replace(":", "");
    const oh = Number(digits.slice(1, 3));
    const om = digits.length > 3 ? Number(digits.slice(3, 5)) : 0;
    if (oh > 23 || om > 59) return Number.NaN;
    offsetMinutes = (zone[0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  return daysFromCivil(y, mo, d) * DAY_MS + ((h * 60 + mi - offsetMinutes) * 60 + s) * 1000 + ms;
}

/** The shape of a date: what {@link explainDate} tells apart from a day that does not exist. */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Why `text` is not a date, for a `file:line: reason`. */
export function explainDate(text: string): string {
  if (!DATE.test(text)) return `${show(text)} is not a date (YYYY-MM-DD)`;
  return `${show(text)} is not a calendar day`;
}

/** Why `text` is not a date-time, for a `file:line: reason`. */
export function explainDateTime(text: string): string {
  const m = DATETIME.exec(text);
  if (m === null) return `${show(text)} is not an ISO 8601 date-time (YYYY-MM-DDTHH:mm[:ss[.sss]][Z|±HH[:MM]])`;
  if (m[7] !== undefined && m[7].length > 3) return `${show(text)} has a fraction of a millisecond; it would be rounded (date-times are kept to the millisecond)`;
  return `${show(text)} is not a real date and time`;
}

/** 0 for `false`, 1 for `true` (any case: CSV's booleans, docs/api.md), else -1. */
export function parseBooleanText(text: string): number {
  if (text.length === 4 && text.toLowerCase() === "true") return 1;
  if (text.length === 5 && text.toLowerCase() === "false") return 0;
  return -1;
}

/**
 * A number written as text in the JSON number grammar ({@link JSON_NUMBER}), exactly: NaN for
 * any other text, for a value beyond the range of a double, and for an integer beyond ±2^53
 * (it would be rounded).
 */
export function parseNumberText(text: string): number {
  if (!JSON_NUMBER.test(text)) return Number.NaN;
  const x = Number(text);
  if (!Number.isFinite(x)) return Number.NaN;
  if (Math.abs(x) >= MAX_EXACT_INTEGER && !isExactLiteral(text, x)) return Number.NaN;
  return x;
}

/** Why `text` is not a number, for a `file:line: reason`. */
export function explainNumberText(text: string): string {
  if (!JSON_NUMBER.test(text)) return `${show(text)} is not a number in JSON syntax`;
  if (!Number.isFinite(Number(text))) return `${show(text)} is beyond the range of a double`;
  return `${show(text)} is beyond ±2^53 and would be rounded`;
}

/**
 * True when the JSON number literal `text` denotes exactly the double `x` and lies within ±2^53:
 * what a literal of magnitude 2^53 or more must show before it is taken (`9007199254740993`
 * parses to 2^53, and `9007199254740992.5` too). A literal with a non-zero fraction is never
 * exact there. Compares with BigInt, so nothing is rounded on the way.
 */
export function isExactLiteral(text: string, x: number): boolean {
  if (!Number.isFinite(x)) return false;
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (m === null) return false;
  const digits = m[2] + (m[3] ?? "");
  const exponent = Number(m[4] ?? "0") - (m[3]?.length ?? 0);
  let value: bigint;
  if (exponent >= 0) value = BigInt(digits) * 10n ** BigInt(exponent);
  else {
    const scale = 10n ** BigInt(-exponent);
    const whole = BigInt(digits);
    if (whole % scale !== 0n) return false;
    value = whole / scale;
  }
  if (m[1] === "-") value = -value;
  if (value > BigInt(MAX_EXACT_INTEGER) || value < -BigInt(MAX_EXACT_INTEGER)) return false;
  return Number.isInteger(x) && BigInt(x) === value;
}

/** `YYYY-MM-DD` of a day number (docs/api.md: a date is written `YYYY-MM-DD`). */
export function formatDate(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** `YYYY-MM-DDTHH:mm:ss.sssZ` of an instant in ms (docs/api.md: a date-time is written in UTC). */
export function formatDateTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** A number as JSON writes it (`-0` as `0`). */
export function formatNumber(x: number): string {
  return JSON.stringify(x);
}

/** Longest value shown in a reason, in UTF-16 code units. */
const MAX_SHOWN = 60;

/** A value quoted for an error reason, cut to {@link MAX_SHOWN} characters. */
export function show(text: string): string {
  return JSON.stringify(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text);
}

/** The number of the `count` ASCII digits of `bytes` at `at`, or -1 when one is not a digit. */
function digitsAtUtf8(bytes: Uint8Array, at: number, count: number): number {
  let x = 0;
  for (let i = at; i < at + count; i++) {
    const c = bytes[i] - 48;
    if (c < 0 || c > 9) return -1;
    x = x * 10 + c;
  }
  return x;
}

/**
 * {@link parseDate} of the UTF-8 text `bytes[from .. to)`, without a JS string (the NDJSON
 * reader profiles every string of a column this way while it may be a date column).
 */
export function parseDateUtf8(bytes: Uint8Array, from: number, to: number): number {
  // '-' at 4 and 7
  if (to - from !== 10 || bytes[from + 4] !== 45 || bytes[from + 7] !== 45) return Number.NaN;
  const y = digitsAtUtf8(bytes, from, 4);
  const mo = digitsAtUtf8(bytes, from + 5, 2);
  const d = digitsAtUtf8(bytes, from + 8, 2);
  if (mo < 0 || d < 0) return Number.NaN;
  return calendarDay(y, mo, d);
}

/**
 * {@link parseDateTime} of the UTF-8 text `bytes[from .. to)`: the shapes `parseIsoUtc` reads
 * straight from the bytes (what `Date.toISOString()` and PostgreSQL write); any other ASCII text
 * is decoded and given to {@link parseDateTime}; text with a byte above 0x7F is no date-time.
 */
export function parseDateTimeUtf8(bytes: Uint8Array, from: number, to: number): number {
  const length = to - from;
  if (length < 16) return Number.NaN;
  // 'T' at 10, ':' at 13 and 16
  if (length >= 20 && bytes[from + 10] === 84 && bytes[from + 13] === 58 && bytes[from + 16] === 58) {
    let end = -1;
    // 'Z', or "+00:00"
    if (bytes[to - 1] === 90) end = length - 1;
    else if (length >= 25 && bytes[to - 6] === 43 && bytes[to - 5] === 48 && bytes[to - 4] === 48 && bytes[to - 3] === 58 && bytes[to - 2] === 48 && bytes[to - 1] === 48) end = length - 6;
    if (end >= 0) {
      const day = parseDateUtf8(bytes, from, from + 10);
      const h = digitsAtUtf8(bytes, from + 11, 2);
      const mi = digitsAtUtf8(bytes, from + 14, 2);
      const s = digitsAtUtf8(bytes, from + 17, 2);
      let ms = 0;
      let ok = !Number.isNaN(day) && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 59;
      if (ok && end !== 19) {
        // '.' and 1–9 digits, only the first three non-zero
        if (end < 21 || end > 29 || bytes[from + 19] !== 46) ok = false;
        for (let i = 20; ok && i < end; i++) {
          const c = bytes[from + i] - 48;
          if (c < 0 || c > 9) ok = false;
          else if (i < 23) ms += c * FRACTION_MS[i - 20];
          else if (c !== 0) ok = false;
        }
      }
      if (ok) return day * DAY_MS + ((h * 60 + mi) * 60 + s) * 1000 + ms;
    }
  }
  let text = "";
  for (let i = from; i < to; i++) {
    const b = bytes[i];
    if (b >= 0x80) return Number.NaN;
    text += String.fromCharCode(b);
  }
  return parseDateTime(text);
}
