/**
 * Binary sort keys for the ordering rule of docs/api.md ("Ordering"): for strings made only
 * of verified characters, a byte string whose plain code-unit order equals `collator.compare`.
 *
 * How the keys are built. At base strength (`sensitivity: "base"`) the collator compares the
 * sequences of *primary weights* of two strings. The weights are not hard-coded here: at module
 * load the collator itself sorts a whitelist of characters (ASCII printable, Latin-1, Latin
 * Extended-A/B and Additional, Greek, Cyrillic, the Latin ligatures U+FB00..FB06), equal ones
 * are grouped, and every group is either
 * - an *atom*: one primary weight, checked by `group > previousAtom + U+FFFD` (U+FFFD sorts
 *   after every other character), which proves that no atom's weights are a prefix of
 *   another's, so concatenated atoms compare like their codes; or
 * - an *expansion* (ß = "ss", æ = "ae", ﬃ = "ffi"): a group that equals a concatenation of up
 *   to {@link MAX_EXPANSION} atoms, found by binary search and confirmed by `compare === 0`.
 * Characters that are ignorable (controls, U+00AD), combining marks, non-ASCII digits, the
 * middle dot (context-dependent after "l"), and groups that are neither (ẚ = "a" + U+02BE, ½)
 * are left out: strings holding them get no key.
 *
 * Digit runs: under `numeric: true` a maximal run of ASCII digits compares by numeric value
 * (leading zeros ignored) and all numbers sort between punctuation/symbols and letters. A run
 * is encoded as DIGITS, the count of significant digits, then the digits two per byte; runs
 * longer than {@link MAX_DIGIT_RUN} digits (ICU splits them into segments) get no key.
 *
 * Every key byte is in 1..255 (0 never occurs, so a zero byte can pad or end a key).
 */
import { collator } from "./collation.ts";

/** Most atoms one whitelisted character may expand to (ﬃ = "ffi" needs 3). */
export const MAX_EXPANSION = 4;

/** Longest digit run (in UTF-16 code units) given a key; ICU splits longer runs at 254. */
export const MAX_DIGIT_RUN = 254;

/**
 * Upper bound of key bytes per UTF-16 code unit of the input: an expansion of
 * {@link MAX_EXPANSION} two-byte atoms; a one-digit run takes 3 bytes.
 */
export const MAX_KEY_BYTES_PER_UNIT = 2 * MAX_EXPANSION;

/** Sorts after every other character at primary strength (CLDR root gives it the top weight). */
const TOP = "\uFFFD";

/** Whitelisted code point ranges, inclusive. */
const RANGES: readonly (readonly [number, number])[] = [
  [0x0020, 0x007e], // ASCII printable
  [0x00a0, 0x024f], // Latin-1 Supplement, Latin Extended-A and -B
  [0x0370, 0x03ff], // Greek and Coptic
  [0x0400, 0x052f], // Cyrillic and Cyrillic Supplement
  [0x1e00, 0x1eff], // Latin Extended Additional
  [0xfb00, 0xfb06], // Latin ligatures (ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ)
];

/**
 * Characters never whitelisted: marks, controls/format/unassigned/surrogates, other digits,
 * and the middle dots U+00B7, U+0387, whose weight changes after "l"/"L" (CLDR root has the
 * prefix rule `l | ·`: "l·" equals "l", while "·" alone has a primary weight).
 */
const EXCLUDED = /[\p{M}\p{C}\u00b7\u0387]|(?![0-9])\p{Nd}/u;

/** Characters whose atoms get one-byte codes (the rest get two bytes): frequent scripts. */
function isFrequent(cp: number): boolean {
  return cp <= 0xff || (cp >= 0x0391 && cp <= 0x03c9) || (cp >= 0x0400 && cp <= 0x045f);
}

/** Lookup tables built at module load; see {@link buildTables}. */
interface KeyTables {
  /**
   * Per UTF-16 code unit: 0 = no key; 1..255 = its one key byte; {@link DIGIT_CODE} = ASCII
   * digit; {@link MULTI_CODE} + length = several key bytes, found in `unitBytes`.
   */
  unitCode: Uint16Array;
  /** Per UTF-16 code unit: its key bytes at `unit * MAX_KEY_BYTES_PER_UNIT` (all code units). */
  unitBytes: Uint8Array;
  /** The one-byte code that starts every digit run. */
  digitsByte: number;
}

/** `unitCode` of the ASCII digits 0..9. */
const DIGIT_CODE = 256;

/** `unitCode` base of characters with several key bytes (plus their count). */
const MULTI_CODE = 512;

/** A group of collator-equal characters, sorted; `chars[0]` represents it. */
interface Group {
  chars: string[];
  /** Atom index, or -1 for an expansion. */
  atom: number;
}

/**
 * Asks the collator for the primary structure of the whitelist and assigns key bytes.
 * @throws Error if the collator orders the whitelist in a way this encoding cannot express
 *   (more than 255 one-byte codes, or a whitelisted character inside the range of numbers).
 */
function buildTables(): KeyTables {
  const compare = collator.compare;
  const chars: string[] = [];
  for (let r = 0; r < RANGES.length; r++) {
    for (let cp = RANGES[r][0]; cp <= RANGES[r][1]; cp++) {
      const ch = String.fromCharCode(cp);
      if (cp >= 0x30 && cp <= 0x39) continue; // ASCII digits: handled as numbers
      if (EXCLUDED.test(ch) || compare(ch, "") === 0) continue; // ignorable: no key
      chars.push(ch);
    }
  }
  chars.sort(compare);
  const groups: Group[] = [];
  for (let i = 0; i < chars.length; i++) {
    const last = groups[groups.length - 1];
    if (last !== undefined && compare(last.chars[0], chars[i]) === 0) last.chars.push(chars[i]);
    else groups.push({ chars: [chars[i]], atom: -1 });
  }

  // Atoms: a group after `previousAtom + TOP` cannot start with previousAtom's weights.
  const atoms: Group[] = [];
  for (let g = 0; g < groups.length; g++) {
    const rep = groups[g].chars[0];
    const previous = atoms[atoms.length - 1];
    if (previous === undefined || compare(rep, previous.chars[0] + TOP) > 0) {
      groups[g].atom = atoms.length;
      atoms.push(groups[g]);
    }
  }

  // Numbers must sort strictly between two atoms: below "0" or above the largest number.
  const largestNumber = "9".repeat(MAX_DIGIT_RUN) + TOP;
  let digitsBefore = 0; // atoms below every number
  for (let a = 0; a < atoms.length; a++) {
    const rep = atoms[a].chars[0];
    if (compare(rep, "0") < 0) {
      if (a !== digitsBefore) throw new Error(`collation: "${rep}" sorts below numbers, after atoms above`);
      digitsBefore++;
    } else if (compare(rep, largestNumber) <= 0) {
      throw new Error(`collation: "${rep}" sorts among numbers`);
    }
  }

  // Codes: one byte for frequent atoms and the digit marker, [lead, trail] for runs of rare atoms.
  const atomCodes: number[][] = [];
  let digitsByte = 0;
  let byte = 0;
  let trail = 0; // 0 when not in a run of rare atoms
  for (let a = 0; a <= atoms.length; a++) {
    if (a === digitsBefore) {
      digitsByte = ++byte;
      trail = 0;
    }
    if (a === atoms.length) break;
    let frequent = false;
    for (let c = 0; c < atoms[a].chars.length; c++) frequent ||= isFrequent(atoms[a].chars[c].charCodeAt(0));
    if (frequent) {
      atomCodes.push([++byte]);
      trail = 0;
    } else {
      if (trail === 0 || trail === 255) {
        byte++;
        trail = 0;
      }
      atomCodes.push([byte, ++trail]);
    }
  }
  if (byte > 255) throw new Error(`collation: ${byte} key byte values needed, 255 available`);

  const unitCode = new Uint16Array(65536);
  const unitBytes = new Uint8Array(65536 * MAX_KEY_BYTES_PER_UNIT);
  const setUnit = (ch: string, codes: readonly number[]): void => {
    const unit = ch.charCodeAt(0);
    unitCode[unit] = codes.length === 1 ? codes[0] : MULTI_CODE + codes.length;
    unitBytes.set(codes, unit * MAX_KEY_BYTES_PER_UNIT);
  };
  for (let d = 0x30; d <= 0x39; d++) unitCode[d] = DIGIT_CODE;
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g];
    let codes: number[] | null = null;
    if (group.atom >= 0) codes = atomCodes[group.atom];
    else {
      const parts = expandIntoAtoms(group.chars[0], atoms);
      if (parts !== null) codes = parts.flatMap((a) => atomCodes[a]);
    }
    if (codes === null || codes.length > MAX_KEY_BYTES_PER_UNIT) continue; // no key
    for (let c = 0; c < group.chars.length; c++) setUnit(group.chars[c], codes);
  }
  return { unitCode, unitBytes, digitsByte };
}

/**
 * Writes `rep` as a concatenation of atoms, greedily: each next atom is the largest one that
 * keeps the prefix `<= rep`. Accepted only when the collator says `rep` equals the result.
 * @returns atom indexes, or null if no concatenation of up to MAX_EXPANSION atoms equals `rep`.
 */
function expandIntoAtoms(rep: string, atoms: readonly Group[]): number[] | null {
  const compare = collator.compare;
  const parts: number[] = [];
  let prefix = "";
  while (parts.length < MAX_EXPANSION) {
    // largest atom a with prefix + atom <= rep (the prefix keeps this monotone in a)
    let lo = 0;
    let hi = atoms.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(prefix + atoms[mid].chars[0], rep) <= 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return null;
    prefix += atoms[lo - 1].chars[0];
    parts.push(lo - 1);
    const sign = compare(prefix, rep);
    if (sign === 0) return parts.length >= 2 ? parts : null;
    if (sign > 0) return null;
  }
  return null;
}

const { unitCode: UNIT_CODE, unitBytes: UNIT_BYTES, digitsByte: DIGITS_BYTE } = buildTables();

/**
 * Writes the collation key of `s` into `out` at `offset` (docs/api.md "Ordering": keys compare
 * bytewise, shorter-is-smaller, exactly as `collator.compare` compares the strings).
 * @param s any string; keys exist only for whitelisted characters (see the module comment)
 * @param out destination with room for `s.length * MAX_KEY_BYTES_PER_UNIT` bytes at `offset`
 * @param offset byte index in `out` where the key starts
 * @returns the byte index just after the key, or -1 if `s` has no key (bytes written up to
 *   that point are garbage); each written byte is in 1..255
 */
export function encodeCollationKey(s: string, out: Uint8Array, offset: number): number {
  const length = s.length;
  let pos = offset;
  let i = 0;
  while (i < length) {
    const code = UNIT_CODE[s.charCodeAt(i)];
    if (code < DIGIT_CODE) {
      // inlined for speed: the common one-byte atom (0 = character without key)
      if (code === 0) return -1;
      out[pos++] = code;
      i++;
    } else if (code === DIGIT_CODE) {
      let start = i;
      let end = i + 1;
      while (end < length) {
        const next = s.charCodeAt(end);
        if (next < 0x30 || next > 0x39) break; // '0'..'9'
        end++;
      }
      if (end - start > MAX_DIGIT_RUN) return -1;
      while (start < end - 1 && s.charCodeAt(start) === 0x30) start++; // leading zeros; keep one digit
      const significant = end - start;
      out[pos++] = DIGITS_BYTE;
      out[pos++] = significant; // 1..254: more digits = larger number
      let d = start;
      if ((significant & 1) === 1) out[pos++] = 1 + s.charCodeAt(d++) - 0x30; // odd count: lone first digit
      for (; d < end; d += 2) out[pos++] = 1 + (s.charCodeAt(d) - 0x30) * 10 + (s.charCodeAt(d + 1) - 0x30);
      i = end;
    } else {
      const base = s.charCodeAt(i) * MAX_KEY_BYTES_PER_UNIT;
      const count = code - MULTI_CODE;
      for (let b = 0; b < count; b++) out[pos++] = UNIT_BYTES[base + b];
      i++;
    }
  }
  return pos;
}

/** Scratch buffer of {@link collationKey}, grown on demand. */
let scratch = new Uint8Array(1024);

/**
 * The collation key of `s` as a string of code units 1..255: for any two strings with keys,
 * `sign(ka < kb ? -1 : ka > kb ? 1 : 0) === sign(collator.compare(a, b))`
 * (docs/api.md "Ordering"; collator-equal strings get identical keys).
 * @returns the key, or null when `s` holds a character outside the verified whitelist, a
 *   control or ignorable character, a combining mark, a non-ASCII digit, a surrogate, or a
 *   digit run longer than {@link MAX_DIGIT_RUN}; such strings must be compared with `collator`.
 */
export function collationKey(s: string): string | null {
  const need = s.length * MAX_KEY_BYTES_PER_UNIT;
  if (scratch.length < need) scratch = new Uint8Array(need);
  const end = encodeCollationKey(s, scratch, 0);
  if (end < 0) return null;
  let key = "";
  for (let p = 0; p < end; p += 4096) {
    const chunk = scratch.subarray(p, Math.min(end, p + 4096)); // apply() takes a bounded argument count
    key += String.fromCharCode.apply(null, chunk as unknown as number[]);
  }
  return key;
}

/**
 * {@link encodeCollationKey} of the string whose UTF-8 is `bytes[from .. to)`, read straight from
 * the bytes: each character is decoded to its UTF-16 code unit on the fly. Writes the same key
 * bytes as `encodeCollationKey(decode(bytes[from .. to)), out, offset)` for well-formed UTF-8.
 * @param bytes well-formed UTF-8 (as the readers and TextEncoder give it)
 * @param out destination with room for `(to - from) * MAX_KEY_BYTES_PER_UNIT` bytes at `offset`
 *   (a UTF-8 character has at least as many bytes as UTF-16 code units)
 * @returns the byte index just after the key, or -1 if the string has no key (bytes written up
 *   to that point are garbage)
 */
export function encodeCollationKeyUtf8(bytes: Uint8Array, from: number, to: number, out: Uint8Array, offset: number): number {
  let pos = offset;
  let i = from;
  while (i < to) {
    const b = bytes[i];
    let unit: number;
    let next: number;
    if (b < 0x80) {
      unit = b;
      next = i + 1;
    } else if (b < 0xe0) {
      // 110xxxxx 10xxxxxx
      unit = ((b & 0x1f) << 6) | (bytes[i + 1] & 0x3f);
      next = i + 2;
    } else if (b < 0xf0) {
      // 1110xxxx 10xxxxxx 10xxxxxx
      unit = ((b & 0x0f) << 12) | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f);
      next = i + 3;
    } else {
      // 4 bytes: a code point above U+FFFF, a surrogate pair in UTF-16, and surrogates have no key
      return -1;
    }
    const code = UNIT_CODE[unit];
    if (code < DIGIT_CODE) {
      // inlined for speed: the common one-byte atom (0 = character without key)
      if (code === 0) return -1;
      out[pos++] = code;
      i = next;
    } else if (code === DIGIT_CODE) {
      // ASCII digits are one byte each, so byte positions count digits
      let start = i;
      let end = i + 1;
      while (end < to) {
        const digit = bytes[end];
        if (digit < 0x30 || digit > 0x39) break; // '0'..'9'
        end++;
      }
      if (end - start > MAX_DIGIT_RUN) return -1;
      while (start < end - 1 && bytes[start] === 0x30) start++; // leading zeros; keep one digit
      const significant = end - start;
      out[pos++] = DIGITS_BYTE;
      out[pos++] = significant; // 1..254: more digits = larger number
      let d = start;
      if ((significant & 1) === 1) out[pos++] = 1 + bytes[d++] - 0x30; // odd count: lone first digit
      for (; d < end; d += 2) out[pos++] = 1 + (bytes[d] - 0x30) * 10 + (bytes[d + 1] - 0x30);
      i = end;
    } else {
      const base = unit * MAX_KEY_BYTES_PER_UNIT;
      const count = code - MULTI_CODE;
      for (let k = 0; k < count; k++) out[pos++] = UNIT_BYTES[base + k];
      i = next;
    }
  }
  return pos;
}
