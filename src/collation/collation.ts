/**
 * The one ordering rule and the one matching rule of docs/api.md ("Ordering", "Matching").
 */

/**
 * Orders strings case- and accent-insensitively with digit runs compared by numeric value.
 * docs/api.md: exactly `new Intl.Collator("en", {sensitivity: "base", numeric: true}).compare`.
 */
export const collator = new Intl.Collator("en", { sensitivity: "base", numeric: true });

/** Matches a combining mark (Unicode category M), removed by {@link fold}. */
const MARKS = /\p{M}/gu;

/**
 * Folds a string for matching: compatibility decomposition, marks removed, lower case.
 * docs/api.md: `fold(s) = s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()`.
 * @returns the folded string (its length may differ from the input's).
 */
export function fold(s: string): string {
  return s.normalize("NFKD").replace(MARKS, "").toLowerCase();
}
