/**
 * A deterministic, realistic user-record generator and a file writer for it.
 *
 * Names come from @faker-js/faker's locale data (several locales, so names carry accents,
 * Cyrillic, Greek and some CJK), but faker is only used once per call to fill small pools of
 * first, middle and last names per locale. Rows are then combined from those pools with a
 * seeded 32-bit PRNG (mulberry32), which is about ten times faster than calling faker per row
 * and gives the same rows for the same `count` and `seed` on every run and machine (faker's
 * seeded output is pinned by its exact version in package.json; the PRNG is integer math).
 */
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { Faker, base, de, el, en, es, fr, ja, pl, ru, tr, uk, vi, zh_CN, type LocaleDefinition } from "@faker-js/faker";
import type { Status, UserRecord } from "./record.ts";
import { WIDE_COLUMNS, type WideRowMaker, type WideUserRecord, wideRecords } from "./wide.ts";

/** Options of {@link generateUsers}. */
export interface GenerateOptions {
  /** Rows to generate: an integer ≥ 0. */
  count: number;
  /** An integer; only its low 32 bits matter (`seed | 0`). The same seed gives the same rows. */
  seed: number;
  /** The first id: an integer ≥ 0, default 1. Row i (0-based) gets id `startId + i`. */
  startId?: number;
  /**
   * True: every record also gets the wide table's seven fields after the four (src/generate/wide.ts,
   * {@link WideUserRecord}); the four are the same as without. Default false.
   */
  wide?: boolean;
}

/** The file formats {@link writeUsers} and {@link writeRecords} write. */
export type UserFileFormat = "ndjson" | "csv" | "json";

/** Options of {@link writeUsers}: a {@link GenerateOptions} plus the output format. */
export interface WriteUsersOptions extends GenerateOptions {
  /** `ndjson`: one object a line; `json`: an array, one object a line; `csv`: RFC 4180 with a header. */
  format: UserFileFormat;
}

/** One locale's share of the rows and how its names are put together. */
interface LocaleSpec {
  /** Faker locale data. */
  locale: LocaleDefinition;
  /** Share of the rows, in thousandths; the shares add up to 1000. */
  weight: number;
  /** "western": `First Last`; "eastern": `Last First`; "eastern-joined": `LastFirst` (Chinese). */
  order: "western" | "eastern" | "eastern-joined";
  /** Whether e-mail local parts are built from romanized English pool names instead (CJK scripts). */
  romanizeFromEnglish: boolean;
}

// Shares: about 72% Latin script (most with accents), 21% Cyrillic or Greek, 5% CJK.
const LOCALES: readonly LocaleSpec[] = [
  { locale: en, weight: 300, order: "western", romanizeFromEnglish: false },
  { locale: de, weight: 100, order: "western", romanizeFromEnglish: false },
  { locale: fr, weight: 100, order: "western", romanizeFromEnglish: false },
  { locale: es, weight: 100, order: "western", romanizeFromEnglish: false },
  { locale: pl, weight: 60, order: "western", romanizeFromEnglish: false },
  { locale: tr, weight: 50, order: "western", romanizeFromEnglish: false },
  { locale: vi, weight: 30, order: "western", romanizeFromEnglish: false },
  { locale: ru, weight: 120, order: "western", romanizeFromEnglish: false },
  { locale: uk, weight: 30, order: "western", romanizeFromEnglish: false },
  { locale: el, weight: 60, order: "western", romanizeFromEnglish: false },
  { locale: ja, weight: 30, order: "eastern", romanizeFromEnglish: true },
  { locale: zh_CN, weight: 20, order: "eastern-joined", romanizeFromEnglish: true },
];

/** Draws per pool from the seeded faker (duplicates are dropped, so pools are at most this). */
const POOL_DRAWS = 1500;
/** Probability thresholds on a uniform u32 (value < threshold ⇒ event), as fractions of 2^32. */
const U32 = 4294967296;
const P_ACTIVE = Math.floor(0.7 * U32);

/** Name pools of one locale, by sex (0 female, 1 male). */
interface LocalePools {
  spec: LocaleSpec;
  first: [string[], string[]];
  last: [string[], string[]];
  /** Patronymics (ru, uk) or empty. */
  middle: [string[], string[]];
  /** Honorific prefixes ("Dr.", "Frau", …) or empty. */
  prefix: [string[], string[]];
  /** ASCII e-mail slugs parallel to `first` / `last` (lower-case a–z only, never empty). */
  firstSlug: [string[], string[]];
  lastSlug: [string[], string[]];
  /** Free-mail domains of the locale. */
  domains: string[];
}

// Cyrillic (ru, uk) and Greek letters → Latin, for e-mail local parts; Latin letters that do not
// decompose under NFKD are listed too. Anything else left after NFKD is dropped.
const TRANSLIT: Record<string, string> = {
  а: "a", б: "b", в: "v", г: "g", д: "d", е: "e", ё: "e", ж: "zh", з: "z", и: "i", й: "y", к: "k",
  л: "l", м: "m", н: "n", о: "o", п: "p", р: "r", с: "s", т: "t", у: "u", ф: "f", х: "kh", ц: "ts",
  ч: "ch", ш: "sh", щ: "shch", ъ: "", ы: "y", ь: "", э: "e", ю: "yu", я: "ya", і: "i", ї: "yi",
  є: "ye", ґ: "g",
  α: "a", β: "v", γ: "g", δ: "d", ε: "e", ζ: "z", η: "i", θ: "th", ι: "i", κ: "k", λ: "l", μ: "m",
  ν: "n", ξ: "x", ο: "o", π: "p", ρ: "r", σ: "s", ς: "s", τ: "t", υ: "y", φ: "f", χ: "ch", ψ: "ps",
  ω: "o",
  ı: "i", ł: "l", ß: "ss", ø: "o", æ: "ae", œ: "oe", đ: "d", ð: "d", þ: "th",
};

/** Lower-case ASCII slug of a name for an e-mail local part: a–z only (digits never). */
function slugify(name: string): string {
  // Greek "ου" is romanized as "ou", not "oy".
  const decomposed = name.toLowerCase().normalize("NFKD").replaceAll("ου", "ou");
  let out = "";
  for (const ch of decomposed) {
    if (ch >= "a" && ch <= "z") out += ch;
    else {
      const mapped = TRANSLIT[ch];
      if (mapped !== undefined) out += mapped;
    }
  }
  return out;
}

/** Distinct values of `draw()` over `draws` calls, in first-drawn order. */
function drawPool(draws: number, draw: () => string): string[] {
  const seen = new Set<string>();
  for (let i = 0; i < draws; i++) seen.add(draw());
  return [...seen];
}

/** Builds every locale's pools from a faker seeded with `seed` (and the locale's index). */
function buildPools(seed: number): { pools: LocalePools[]; englishFirst: string[][]; englishLast: string[][]; companyDomains: string[] } {
  const pools: LocalePools[] = [];
  for (let l = 0; l < LOCALES.length; l++) {
    const spec = LOCALES[l];
    const faker = new Faker({ locale: [spec.locale, en, base] });
    faker.seed([seed | 0, l]);
    const person = spec.locale.person ?? {};
    const sexes = ["female", "male"] as const;
    const first: [string[], string[]] = [[], []];
    const last: [string[], string[]] = [[], []];
    const middle: [string[], string[]] = [[], []];
    const prefix: [string[], string[]] = [[], []];
    for (let s = 0; s < 2; s++) {
      const sex = sexes[s];
      first[s] = drawPool(POOL_DRAWS, () => faker.person.firstName(sex));
      last[s] = drawPool(POOL_DRAWS, () => faker.person.lastName(sex));
      if (person.middle_name != null && spec.locale !== en) {
        middle[s] = drawPool(POOL_DRAWS / 5, () => faker.person.middleName(sex));
      }
      if (person.prefix != null) prefix[s] = drawPool(50, () => faker.person.prefix(sex));
    }
    const domains = spec.locale.internet?.free_email ?? en.internet?.free_email ?? ["example.com"];
    pools.push({
      spec,
      first,
      last,
      middle,
      prefix,
      firstSlug: [first[0].map(slugify), first[1].map(slugify)],
      lastSlug: [last[0].map(slugify), last[1].map(slugify)],
      domains: [...domains],
    });
  }
  const englishFirst = [pools[0].firstSlug[0], pools[0].firstSlug[1]];
  const englishLast = [pools[0].lastSlug[0], pools[0].lastSlug[1]];
  const faker = new Faker({ locale: [en, base] });
  faker.seed([seed | 0, LOCALES.length]);
  const companyDomains = drawPool(300, () => faker.internet.domainName());
  // Slugs must not be empty (every local part needs a non-digit before the id digits).
  for (const pool of pools) {
    for (let s = 0; s < 2; s++) {
      for (let i = 0; i < pool.firstSlug[s].length; i++) if (pool.firstSlug[s][i] === "") pool.firstSlug[s][i] = "user";
      for (let i = 0; i < pool.lastSlug[s].length; i++) if (pool.lastSlug[s][i] === "") pool.lastSlug[s][i] = "mail";
    }
  }
  return { pools, englishFirst, englishLast, companyDomains };
}

/** Upper-cases the first letter of an ASCII slug. */
function capitalize(slug: string): string {
  return slug.charAt(0).toUpperCase() + slug.slice(1);
}

/**
 * Generates `count` user records, deterministically for a given `count`, `seed` and `startId`
 * (row i's name and status depend only on the seed and i, so a longer run starts with the rows
 * of a shorter one; `startId` changes only the ids and the digits in the emails).
 *
 * - `id`: `startId + i` (default startId 1), unique, ascending.
 * - `name`: a first and last name from one of 12 faker locales (about 72% Latin script, most with
 *   accents; 21% Cyrillic or Greek; 5% Japanese or Chinese), with occasional middle names,
 *   patronymics, double surnames, prefixes ("Dr."), suffixes ("III", ", Jr."), quoted nicknames,
 *   numbers, and all-lower-case or all-upper-case variants. Names repeat across rows.
 * - `email`: ASCII, `<local>@<domain>`, where the local part is built from the romanized name and
 *   ends with the id's decimal digits right after a letter, `.` or `_` — so emails are unique
 *   across the whole dataset (the trailing digit run is the id) and natural ordering matters
 *   ("anna.21@…" before "anna.111@…"). About 10% are capitalized ("Anna.Kowalska21@…").
 * - `status`: `active` with probability 0.7, else `inactive`.
 *
 * With `wide: true`, each record is a {@link WideUserRecord}: the same four fields, then
 * `created_at`, `birthday`, `role`, `age`, `verified`, `notes`, `prefs` from a seeded stream of
 * their own (src/generate/wide.ts `wideRecords`; `created_at` depends on `count` as well, so a
 * shorter wide run is not a prefix of a longer one in that field).
 *
 * Cost: about 0.1 s to build the name pools with faker, then well over 1M rows/s (wide: about
 * half that).
 * @throws RangeError when `count` is not an integer ≥ 0, `startId` not an integer ≥ 0, or
 *   `startId + count - 1` is not a safe integer.
 */
export function generateUsers(options: GenerateOptions & { wide: true }): Generator<WideUserRecord>;
export function generateUsers(options: GenerateOptions): Generator<UserRecord>;
export function* generateUsers(options: GenerateOptions): Generator<UserRecord> {
  const count = options.count;
  const startId = options.startId ?? 1;
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be an integer >= 0 (got ${count})`);
  if (!Number.isInteger(startId) || startId < 0) throw new RangeError(`startId must be an integer >= 0 (got ${startId})`);
  if (!Number.isSafeInteger(startId + count)) throw new RangeError(`ids up to ${startId + count - 1} are not safe integers`);
  if (!Number.isFinite(options.seed)) throw new RangeError(`seed must be a finite number (got ${options.seed})`);
  if (count === 0) return;

  const { pools, englishFirst, englishLast, companyDomains } = buildPools(options.seed);
  const widen: WideRowMaker | undefined = options.wide === true ? wideRecords(count, options.seed) : undefined;

  // Locale lookup: the top 10 bits of a u32 index a 1024-slot table filled by weight (1000 slots
  // by weight, the last 24 go to the first locale, English).
  const localeBySlot = new Uint8Array(1024);
  let slot = 0;
  for (let l = 0; l < pools.length; l++) {
    for (let w = 0; w < pools[l].spec.weight; w++) localeBySlot[slot++] = l;
  }

  // mulberry32, inlined below for speed; the state is mixed with the seed so different seeds
  // give different rows even though the pools may overlap.
  let state = (Math.imul(options.seed | 0, 0x9e3779b1) ^ 0x2545f491) >>> 0;

  for (let i = 0; i < count; i++) {
    const id = startId + i;
    // Draw 6 u32s for this row (inline mulberry32).
    let t: number;
    state = (state + 0x6d2b79f5) | 0;
    t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const r0 = (t ^ (t >>> 14)) >>> 0;
    state = (state + 0x6d2b79f5) | 0;
    t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const r1 = (t ^ (t >>> 14)) >>> 0;
    state = (state + 0x6d2b79f5) | 0;
    t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const r2 = (t ^ (t >>> 14)) >>> 0;
    state = (state + 0x6d2b79f5) | 0;
    t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const r3 = (t ^ (t >>> 14)) >>> 0;
    state = (state + 0x6d2b79f5) | 0;
    t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const r4 = (t ^ (t >>> 14)) >>> 0;
    state = (state + 0x6d2b79f5) | 0;
    t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const r5 = (t ^ (t >>> 14)) >>> 0;

    const pool = pools[localeBySlot[r0 >>> 22]];
    const spec = pool.spec;
    // r0 low bits: sex (bit 0), variant selectors (bits 1..21).
    const sex = r0 & 1;
    const firstNames = pool.first[sex];
    const lastNames = pool.last[sex];
    const fi = (r1 % firstNames.length) >>> 0;
    const li = (r2 % lastNames.length) >>> 0;
    const first = firstNames[fi];
    let last = lastNames[li];

    // Variants, each keyed on different bits of r3 (0..1023 per 10-bit field).
    const v1 = r3 & 1023; // name decoration
    const v2 = (r3 >>> 10) & 1023; // case variant
    const v3 = (r3 >>> 20) & 1023; // email pattern and domain kind

    let name: string;
    if (spec.order === "western") {
      // Double-barrelled surname (faker's Spanish names already carry two surnames).
      if (v1 >= 1000 && spec.locale !== el && spec.locale !== es) last = `${last}-${lastNames[(r4 % lastNames.length) >>> 0]}`;
      const middles = pool.middle[sex];
      if (middles.length > 0 && v1 >= 400 && v1 < 550) {
        name = `${first} ${middles[(r4 >>> 8) % middles.length]} ${last}`;
      } else if (spec.locale === en && v1 >= 400 && v1 < 500) {
        // Middle initial: A–Z.
        name = `${first} ${String.fromCharCode(65 + ((r4 >>> 8) % 26))}. ${last}`;
      } else if (spec.locale === en && v1 >= 500 && v1 < 503) {
        // Quoted nickname.
        name = `${first} "${capitalize(englishFirst[sex ^ 1][(r4 >>> 8) % englishFirst[sex ^ 1].length])}" ${last}`;
      } else {
        name = `${first} ${last}`;
      }
      if (v1 >= 550 && v1 < 570 && pool.prefix[sex].length > 0) {
        name = `${pool.prefix[sex][(r4 >>> 12) % pool.prefix[sex].length]} ${name}`;
      } else if (v1 >= 570 && v1 < 580 && spec.locale === en) {
        // Generational suffixes, some after a comma ("Smith, Jr.").
        const k = (r4 >>> 12) % 6;
        name = k === 0 ? `${name}, Jr.` : k === 1 ? `${name} Jr.` : k === 2 ? `${name} Sr.` : k === 3 ? `${name} II` : k === 4 ? `${name} III` : `${name} IV`;
      } else if (v1 >= 580 && v1 < 586) {
        // A number in the name ("Anna Kowalska 2").
        name = `${name} ${2 + ((r4 >>> 12) % 120)}`;
      }
    } else if (spec.order === "eastern") {
      name = `${last} ${first}`;
    } else {
      name = `${last}${first}`;
    }
    if (v2 < 15) name = name.toLowerCase();
    else if (v2 < 23) name = name.toUpperCase();

    // E-mail: a non-digit character always precedes the id digits, and slugs hold no digits, so
    // the trailing digit run is exactly String(id): unique.
    let fs: string;
    let ls: string;
    if (spec.romanizeFromEnglish) {
      fs = englishFirst[sex][fi % englishFirst[sex].length];
      ls = englishLast[0][li % englishLast[0].length];
    } else {
      fs = pool.firstSlug[sex][fi];
      ls = pool.lastSlug[sex][li];
    }
    if (v2 >= 900) {
      fs = capitalize(fs);
      ls = capitalize(ls);
    }
    const pattern = v3 & 7;
    let local: string;
    if (pattern <= 1) local = `${fs}.${ls}${id}`;
    else if (pattern === 2) local = `${fs}.${ls}.${id}`;
    else if (pattern === 3) local = `${fs}_${ls}${id}`;
    else if (pattern === 4) local = `${fs.charAt(0)}${ls}${id}`;
    else if (pattern === 5) local = `${fs}.${id}`;
    else if (pattern === 6) local = `${ls}.${fs}${id}`;
    else local = `${fs}${id}`;
    const domain = v3 >>> 3 < 26 ? companyDomains[(r4 >>> 16) % companyDomains.length] : pool.domains[(r4 >>> 20) % pool.domains.length];

    const status: Status = r5 < P_ACTIVE ? "active" : "inactive";
    if (widen !== undefined) yield widen(i, id, name, `${local}@${domain}`, status);
    else yield { id, name, email: `${local}@${domain}`, status };
  }
}

/** Bytes of output gathered before one write call. */
const WRITE_CHUNK_BYTES = 1 << 20;
/** Rows between two progress callbacks. */
const PROGRESS_EVERY_ROWS = 1 << 16;

// Characters that JSON.stringify would escape (or that need a check: lone surrogates).
const JSON_ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** One CSV field, quoted per RFC 4180 §2 (6–7) when it holds `"`, `,`, CR or LF. */
export function csvField(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // '"' ',' '\n' '\r'
    if (c === 34 || c === 44 || c === 10 || c === 13) return `"${value.replaceAll('"', '""')}"`;
  }
  return value;
}

/**
 * UTF-8 output being assembled: `bytes[0, length)` is pending, written to the file in chunks.
 * Rows are encoded straight into it: building each row as a string (a rope of its fields) and
 * joining the rows costs two to three times more at millions of rows.
 */
interface Output {
  bytes: Buffer;
  length: number;
}

/** Makes room for `n` more bytes, growing the buffer (a row longer than the free space). */
function reserve(out: Output, n: number): void {
  if (out.bytes.length - out.length >= n) return;
  const bigger = Buffer.allocUnsafe(Math.max(out.bytes.length * 2, out.length + n));
  out.bytes.copy(bigger, 0, 0, out.length);
  out.bytes = bigger;
}

/**
 * Encodes `text` as UTF-8 into `bytes` at `at` (room for 3 bytes a UTF-16 code unit must be
 * reserved); a lone surrogate becomes U+FFFD, as Buffer and TextEncoder write it. Encoded here
 * rather than by a native call per string: for strings of tens of characters the call costs
 * more than the encoding.
 * @returns the offset after the last byte written
 */
function encodeUtf8(bytes: Buffer, at: number, text: string): number {
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes[at++] = c;
    else if (c < 0x800) {
      bytes[at++] = 0xc0 | (c >>> 6);
      bytes[at++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      bytes[at++] = 0xe0 | (c >>> 12);
      bytes[at++] = 0x80 | ((c >>> 6) & 0x3f);
      bytes[at++] = 0x80 | (c & 0x3f);
    } else {
      const d = c <= 0xdbff && i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        // A surrogate pair: one code point above U+FFFF, 4 bytes.
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        bytes[at++] = 0xf0 | (cp >>> 18);
        bytes[at++] = 0x80 | ((cp >>> 12) & 0x3f);
        bytes[at++] = 0x80 | ((cp >>> 6) & 0x3f);
        bytes[at++] = 0x80 | (cp & 0x3f);
        i++;
      } else {
        // A lone surrogate: U+FFFD.
        bytes[at++] = 0xef;
        bytes[at++] = 0xbf;
        bytes[at++] = 0xbd;
      }
    }
  }
  return at;
}

/** Appends `text` encoded as UTF-8 (see {@link encodeUtf8}). */
function putText(out: Output, text: string): void {
  // A UTF-16 code unit is at most 3 bytes of UTF-8.
  reserve(out, text.length * 3);
  out.length = encodeUtf8(out.bytes, out.length, text);
}

/** Appends an ASCII string (keys, numbers, literals) one byte a character. */
function putAscii(out: Output, text: string): void {
  reserve(out, text.length);
  const bytes = out.bytes;
  let at = out.length;
  for (let i = 0; i < text.length; i++) bytes[at++] = text.charCodeAt(i);
  out.length = at;
}

/**
 * Appends `value` as a JSON string literal, the UTF-8 of JSON.stringify(value): quoted as it is,
 * or, when it holds a quote, backslash, control character or surrogate, JSON.stringify's text.
 */
function putJsonString(out: Output, value: string): void {
  if (JSON_ESCAPED.test(value)) {
    putText(out, JSON.stringify(value));
    return;
  }
  reserve(out, value.length * 3 + 2);
  const bytes = out.bytes;
  bytes[out.length] = 34; // '"'
  const end = encodeUtf8(bytes, out.length + 1, value);
  bytes[end] = 34;
  out.length = end + 1;
}

/** Appends {@link csvField}(value) as UTF-8 (see {@link encodeUtf8}). */
function putCsvField(out: Output, value: string): void {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // '"' ',' '\n' '\r': quoted.
    if (c === 34 || c === 44 || c === 10 || c === 13) {
      putText(out, csvField(value));
      return;
    }
  }
  putText(out, value);
}

/**
 * Appends an added column's value as JSON: `null` for null or a missing field, a string
 * literal, a finite number, `true`/`false`, or an object or array as JSON.stringify writes it.
 * @throws TypeError for a number that is not finite, or a value JSON cannot hold (a function,
 *   a symbol, a bigint).
 */
function putJsonValue(out: Output, value: unknown, column: string, row: number): void {
  if (value === null || value === undefined) putAscii(out, "null");
  else if (typeof value === "string") putJsonString(out, value);
  else if (typeof value === "boolean") putAscii(out, value ? "true" : "false");
  else if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`record ${row}: ${column} must be a finite number (got ${value})`);
    putAscii(out, String(value));
  } else putText(out, jsonText(value, column, row));
}

/**
 * Appends an added column's value as a CSV field: empty for null or a missing field; `""` for
 * the empty string (a quoted empty field, so that readers that tell the two apart, such as
 * Postgres' COPY, keep it a string); numbers and booleans as their JSON text; objects and arrays
 * as their JSON text, quoted.
 * @throws TypeError as {@link putJsonValue}.
 */
function putCsvValue(out: Output, value: unknown, column: string, row: number): void {
  if (value === null || value === undefined) return;
  if (typeof value === "string") {
    if (value === "") putAscii(out, '""');
    else putCsvField(out, value);
  } else if (typeof value === "object" || typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") {
    putText(out, csvField(jsonText(value, column, row)));
  } else putJsonValue(out, value, column, row);
}

/** JSON.stringify(value) for an object or array. @throws TypeError when JSON cannot hold it. */
function jsonText(value: unknown, column: string, row: number): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(`record ${row}: ${column} cannot be written as JSON (${(error as Error).message})`);
  }
  if (text === undefined) throw new TypeError(`record ${row}: ${column} cannot be written as JSON (a ${typeof value})`);
  return text;
}

/**
 * Writes `records` to `path` in `format`, atomically: into a temporary file beside `path`
 * (`.<name>.<pid>.<random>.tmp`), fsynced, then renamed over `path`. If anything fails (the
 * records iterator throws, the disk fills, the directory does not exist), the temporary file is
 * removed and `path` is left as it was; the error is rethrown.
 *
 * Formats (all UTF-8, no BOM):
 * - `ndjson`: one JSON object `{"id","name","email","status"}` per line, LF-terminated.
 * - `json`: `[` on line 1, then one object per line separated by `,`, then `]` — record i is
 *   on line i + 2.
 * - `csv`: header `id,name,email,status`, CRLF line ends, fields quoted per RFC 4180 when they
 *   hold a comma, quote, CR or LF (quotes doubled); ids as `String(id)`.
 * Strings are written as JSON.stringify and {@link csvField} write them, encoded as UTF-8 (a
 * lone surrogate: escaped in JSON, U+FFFD in CSV).
 *
 * `columns` adds fields after the four, in its order, to every record (the header too): a
 * missing field or null is JSON `null` or an empty CSV field; strings, numbers and booleans as
 * in JSON (in CSV: booleans `true`/`false`, the empty string `""`); objects and arrays as their
 * JSON text (in CSV: that text, quoted).
 *
 * Cost, beyond producing the records: roughly 1 µs a four-field row and 2 µs a wide row
 * (src/generate/wide.ts, about 300 bytes).
 * @param onProgress called with the rows written so far (every 65,536 rows and at the end).
 * @param columns field names after `id`, `name`, `email`, `status` (default none; not one of
 *   those four).
 * @throws TypeError for an unknown format, or a record with a non-finite id or number or a
 *   value JSON cannot hold.
 */
export async function writeRecords(
  path: string,
  records: Iterable<UserRecord>,
  format: UserFileFormat,
  onProgress?: (rows: number) => void,
  columns: readonly string[] = [],
): Promise<void> {
  if (format !== "ndjson" && format !== "csv" && format !== "json") {
    throw new TypeError(`format must be ndjson, csv or json (got ${JSON.stringify(format)})`);
  }
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  const handle = await open(tmp, "wx");
  let closed = false;
  try {
    // Room for a chunk and the row that crosses its end.
    const out: Output = { bytes: Buffer.allocUnsafe(2 * WRITE_CHUNK_BYTES), length: 0 };
    const csv = format === "csv";
    const extra = columns.length;
    // Each added field's JSON member prefix, made once: `,"created_at":`.
    const jsonKeys = columns.map((c) => `,${JSON.stringify(c)}:`);
    if (csv) putText(out, `id,name,email,status${columns.map((c) => `,${csvField(c)}`).join("")}\r\n`);
    else if (format === "json") putAscii(out, "[\n");
    let rows = 0;
    for (const r of records) {
      if (!Number.isFinite(r.id)) throw new TypeError(`record ${rows + 1}: id must be a finite number (got ${r.id})`);
      // String(id) is the JSON form of a finite number.
      const id = String(r.id);
      if (csv) {
        putAscii(out, id);
        putAscii(out, ",");
        putCsvField(out, r.name);
        putAscii(out, ",");
        putCsvField(out, r.email);
        putAscii(out, ",");
        putCsvField(out, r.status);
        if (extra > 0) {
          const fields = r as unknown as Record<string, unknown>;
          for (let c = 0; c < extra; c++) {
            putAscii(out, ",");
            putCsvValue(out, fields[columns[c]], columns[c], rows + 1);
          }
        }
        putAscii(out, "\r\n");
      } else {
        putAscii(out, format === "json" && rows > 0 ? ',\n{"id":' : '{"id":');
        putAscii(out, id);
        putAscii(out, ',"name":');
        putJsonString(out, r.name);
        putAscii(out, ',"email":');
        putJsonString(out, r.email);
        putAscii(out, ',"status":');
        putJsonString(out, r.status);
        if (extra > 0) {
          const fields = r as unknown as Record<string, unknown>;
          for (let c = 0; c < extra; c++) {
            putText(out, jsonKeys[c]);
            putJsonValue(out, fields[columns[c]], columns[c], rows + 1);
          }
        }
        putAscii(out, format === "ndjson" ? "}\n" : "}");
      }
      rows++;
      if (out.length >= WRITE_CHUNK_BYTES) {
        await handle.write(out.bytes.subarray(0, out.length));
        out.length = 0;
      }
      if (onProgress !== undefined && (rows & (PROGRESS_EVERY_ROWS - 1)) === 0) onProgress(rows);
    }
    if (format === "json") putAscii(out, rows === 0 ? "]\n" : "\n]\n");
    if (out.length > 0) await handle.write(out.bytes.subarray(0, out.length));
    await handle.sync();
    await handle.close();
    closed = true;
    await rename(tmp, path);
    if (onProgress !== undefined) onProgress(rows);
  } catch (error) {
    if (!closed) await handle.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw error;
  }
}

/**
 * Generates `options.count` users ({@link generateUsers}) and writes them to `path` in
 * `options.format` ({@link writeRecords}: temporary file + rename, so a failure leaves no
 * half-written file). With `options.wide`, the records carry the wide fields and the files their
 * columns ({@link WIDE_COLUMNS}; CSV header
 * `id,name,email,status,created_at,birthday,role,age,verified,notes,prefs`).
 * @param onProgress called with the rows written so far (every 65,536 rows and at the end).
 * @throws RangeError for bad options (see {@link generateUsers}); any I/O error, after removing
 *   the temporary file.
 */
export async function writeUsers(
  path: string,
  options: WriteUsersOptions,
  onProgress?: (rows: number) => void,
): Promise<void> {
  await writeRecords(path, generateUsers(options), options.format, onProgress, options.wide === true ? WIDE_COLUMNS : []);
}
