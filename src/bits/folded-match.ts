/**
 * Byte-level matching of folded strings (collation.ts `fold`, UTF-8): what the text operators
 * of every string column run on, with no JS string per row. Folding is done once per needle;
 * each row's folded bytes are compared in place.
 */

/** The positive text operators a byte scan answers; the negative ones are their complements. */
export type PositiveTextOp = "contains" | "equals" | "startsWith" | "endsWith";

/**
 * Does the folded value `bytes[start..end)` satisfy `op` against the folded `needle`?
 * Byte comparison of UTF-8 is code-point comparison, so this is `fold(value) OP fold(input)`.
 */
export function bytesMatch(bytes: Uint8Array, start: number, end: number, op: PositiveTextOp, needle: Uint8Array): boolean {
  const len = end - start;
  const m = needle.length;
  if (m > len) return false;
  switch (op) {
    case "equals":
      if (m !== len) return false;
      return sameBytes(bytes, start, needle);
    case "startsWith":
      return sameBytes(bytes, start, needle);
    case "endsWith":
      return sameBytes(bytes, end - m, needle);
    case "contains": {
      if (m === 0) return true;
      const first = needle[0];
      const last = end - m;
      for (let i = start; i <= last; i++) {
        if (bytes[i] === first && sameBytes(bytes, i, needle)) return true;
      }
      return false;
    }
  }
}

/** True when `bytes[at .. at + needle.length)` equals `needle`. */
export function sameBytes(bytes: Uint8Array, at: number, needle: Uint8Array): boolean {
  for (let j = 0; j < needle.length; j++) if (bytes[at + j] !== needle[j]) return false;
  return true;
}
