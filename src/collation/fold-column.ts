/**
 * {@link fold} (collation.ts, docs/api.md "Matching") over a whole packed UTF-8 column without
 * a JS string per value: ASCII is lower-cased byte by byte, and each other word is folded once
 * and then looked up by its bytes.
 *
 * Why words may be folded apart: `fold(a + " " + b) === fold(a) + " " + fold(b)`. U+0020 is a
 * starter with no decomposition, so NFKD neither reorders marks across it nor changes it; mark
 * removal goes code point by code point; and it is neither cased nor case-ignorable, so the one
 * context-dependent lower-casing rule (Greek final sigma) looks no further than it.
 */
import { type ByteColumn, MAX_COLUMN_BYTES } from "../bits/byte-column.ts";
import { fold } from "./collation.ts";

/** ' ': the separator of the words folded apart. */
const SPACE = 0x20;

/**
 * Words seen so far and their folded UTF-8: an open-addressing hash table whose keys are
 * ranges of the column's own bytes (the first occurrence of each word, not copied).
 */
interface WordCache {
  /** Entry index + 1 per slot, 0 for empty; length a power of two, at most half full. */
  slots: Int32Array;
  /** Per entry: the word's first byte in the column, its length, its hash. */
  keyStart: Uint32Array;
  keyLength: Uint32Array;
  keyHash: Int32Array;
  /** Per entry: where its folded bytes start in `folded`, and their length. */
  foldedStart: Uint32Array;
  foldedLength: Uint32Array;
  /** Folded words back to back. */
  folded: Uint8Array;
  foldedUsed: number;
  /** Entries so far. */
  count: number;
}

/** An empty cache. */
function wordCache(): WordCache {
  const entries = 1024;
  return {
    slots: new Int32Array(2 * entries),
    keyStart: new Uint32Array(entries),
    keyLength: new Uint32Array(entries),
    keyHash: new Int32Array(entries),
    foldedStart: new Uint32Array(entries),
    foldedLength: new Uint32Array(entries),
    folded: new Uint8Array(16 * entries),
    foldedUsed: 0,
    count: 0,
  };
}

/** Doubles the entry arrays and the table (rehashing every entry). */
function growEntries(cache: WordCache): void {
  const entries = cache.keyStart.length * 2;
  const widen = <T extends Uint32Array | Int32Array>(a: T, make: (n: number) => T): T => {
    const b = make(entries);
    b.set(a);
    return b;
  };
  cache.keyStart = widen(cache.keyStart, (n) => new Uint32Array(n));
  cache.keyLength = widen(cache.keyLength, (n) => new Uint32Array(n));
  cache.keyHash = widen(cache.keyHash, (n) => new Int32Array(n));
  cache.foldedStart = widen(cache.foldedStart, (n) => new Uint32Array(n));
  cache.foldedLength = widen(cache.foldedLength, (n) => new Uint32Array(n));
  const slots = new Int32Array(2 * entries);
  const mask = slots.length - 1;
  for (let e = 0; e < cache.count; e++) {
    let slot = cache.keyHash[e] & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = e + 1;
  }
  cache.slots = slots;
}

// ignoreBOM: a value may start with U+FEFF, which is kept
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

/**
 * The cache entry of the word `bytes[from .. to)`, folding and adding it when it is new.
 * @returns the entry index
 */
function foldedWord(cache: WordCache, bytes: Uint8Array, from: number, to: number): number {
  // FNV-1a over the word's bytes
  let hash = 0x811c9dc5 | 0;
  for (let p = from; p < to; p++) hash = Math.imul(hash ^ bytes[p], 0x01000193);
  const length = to - from;
  let mask = cache.slots.length - 1;
  let slot = hash & mask;
  for (;;) {
    const entry = cache.slots[slot] - 1;
    if (entry < 0) break;
    if (cache.keyHash[entry] === hash && cache.keyLength[entry] === length) {
      const start = cache.keyStart[entry];
      let same = true;
      for (let k = 0; k < length; k++) {
        if (bytes[start + k] !== bytes[from + k]) {
          same = false;
          break;
        }
      }
      if (same) return entry;
    }
    slot = (slot + 1) & mask;
  }
  // A new word: decode, fold, encode.
  const word = fold(decoder.decode(bytes.subarray(from, to)));
  if (cache.count === cache.keyStart.length) {
    growEntries(cache);
    mask = cache.slots.length - 1;
    slot = hash & mask;
    while (cache.slots[slot] !== 0) slot = (slot + 1) & mask;
  }
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  const need = cache.foldedUsed + word.length * 3;
  if (need > cache.folded.length) {
    const grown = new Uint8Array(Math.max(need, cache.folded.length * 2));
    grown.set(cache.folded.subarray(0, cache.foldedUsed));
    cache.folded = grown;
  }
  const written = encoder.encodeInto(word, cache.folded.subarray(cache.foldedUsed)).written;
  const entry = cache.count++;
  cache.keyStart[entry] = from;
  cache.keyLength[entry] = length;
  cache.keyHash[entry] = hash;
  cache.foldedStart[entry] = cache.foldedUsed;
  cache.foldedLength[entry] = written;
  cache.foldedUsed += written;
  cache.slots[slot] = entry + 1;
  return entry;
}

/** A copy of `bytes[0 .. used)` in a buffer of at least `need` bytes (doubling). */
function grow(bytes: Uint8Array, used: number, need: number): Uint8Array<ArrayBuffer> {
  if (need > MAX_COLUMN_BYTES) throw new RangeError("string column exceeds 4 GiB");
  const grown = new Uint8Array(Math.min(MAX_COLUMN_BYTES, Math.max(need, bytes.length * 2)));
  grown.set(bytes.subarray(0, used));
  return grown;
}

/**
 * Folds every value of a UTF-8 column: value i of the result is the UTF-8 of
 * `fold(decode(value i))`, byte for byte.
 * @param column n values of well-formed UTF-8; offsets of length n + 1
 * @returns a column of n values (sizes may differ from the input's: NFKD expands ligatures and
 *   drops marks)
 * @throws RangeError when the result would exceed 4 GiB (offsets are 32-bit)
 */
export function foldColumn(column: ByteColumn): ByteColumn {
  const { bytes, offsets } = column;
  const n = offsets.length - 1;
  const total = offsets[n] - offsets[0];
  let out: Uint8Array = new Uint8Array(Math.min(MAX_COLUMN_BYTES, Math.max(64, total + (total >>> 6))));
  const outOffsets = new Uint32Array(n + 1);
  const cache = wordCache();
  let at = 0;
  for (let i = 0; i < n; i++) {
    const from = offsets[i];
    const to = offsets[i + 1];
    // ASCII folds to itself lower-cased, byte for byte: room for the whole value
    if (at + (to - from) > out.length) out = grow(out, at, at + (to - from));
    let p = from;
    for (; p < to; p++) {
      const b = bytes[p];
      if (b >= 0x80) break;
      // 'A'..'Z' → 'a'..'z'
      out[at++] = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
    }
    if (p < to) {
      // Non-ASCII: restart at the start of its word, then go word by word.
      let word = p;
      while (word > from && bytes[word - 1] !== SPACE) word--;
      at -= p - word;
      p = word;
      while (p < to) {
        let end = p;
        let ascii = true;
        for (; end < to; end++) {
          const b = bytes[end];
          if (b === SPACE) break;
          if (b >= 0x80) ascii = false;
        }
        if (ascii) {
          for (let q = p; q < end; q++) {
            const b = bytes[q];
            out[at++] = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
          }
        } else {
          const entry = foldedWord(cache, bytes, p, end);
          const start = cache.foldedStart[entry];
          const length = cache.foldedLength[entry];
          // room for this word and, at most, the rest of the value
          if (at + length + (to - end) > out.length) out = grow(out, at, at + length + (to - end));
          const folded = cache.folded;
          for (let k = 0; k < length; k++) out[at++] = folded[start + k];
        }
        if (end < to) {
          out[at++] = SPACE;
          end++;
        }
        p = end;
      }
    }
    outOffsets[i + 1] = at;
  }
  // a view: the spare room past `at` was never written, so it holds no memory
  return { bytes: out.subarray(0, at), offsets: outOffsets };
}
