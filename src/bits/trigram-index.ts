/**
 * The shape of a character trigram index (built and read by store/trigrams.ts): a type only,
 * here below the kinds and the store so that both may hold one.
 */

/**
 * A character trigram index over a column's folded strings: for every distinct sequence of 3
 * code points (trigrams.ts `trigramKey`), the set of rows whose folded string contains it. A list with more than
 * rowCount / 32 rows is stored as a bitmap (smaller than 4 bytes a row, and a match set as
 * is); the others as ascending row numbers per partition code (a group), encoded as LEB128 gaps.
 */
export interface TrigramIndex {
  /**
   * Distinct trigram keys `c0 * 2^34 + c1 * 2^17 + c2` (code points, those above U+1FFFF
   * clamped to it), ascending; length K.
   */
  keys: Float64Array;
  /** Rows in each key's list; length K. */
  counts: Uint32Array;
  /**
   * Rows of each key's list per group (partition code), at `k * S + code`; length K·S, where S is
   * the number of groups (the store's partition codes, 1 without a partition).
   */
  groupCounts: Uint32Array;
  /**
   * Where each list is, at `k * S + code`; length K·S. A dense list (count * 32 > rowCount):
   * its first word in `bitmaps` (the same in each of its S slots). A sparse one: the first byte
   * in `gaps` of its rows of that group.
   */
  refs: Uint32Array;
  /** Dense lists' bitmaps back to back, ceil(rowCount / 32) words each. */
  bitmaps: Uint32Array;
  /**
   * Sparse lists back to back, each as S groups (its rows of partition code 0, then of code 1…):
   * in a group, the first row, then each row minus the previous one, each as an unsigned
   * LEB128 number (7 bits a byte, low first, high bit set on all but the last).
   */
  gaps: Uint8Array;
}
