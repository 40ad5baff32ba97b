/**
 * The global search's request form (docs/api.md "Global search"): GET `q` (alias `search`)
 * and POST `quickFilter` (AG Grid's quick filter text) read into a `search` predicate.
 */
import { MAX_FILTER_LENGTH } from "../kinds/operators.ts";
import type { Predicate } from "./types.ts";

/**
 * A search text as a predicate: split on white space (JavaScript's `\s`, Unicode spaces
 * included), empty pieces dropped; null when no term is left (an empty value is no search).
 * @returns the predicate, null for no search, or the reason the text is refused (a 400): more
 *   than {@link MAX_FILTER_LENGTH} characters, like a filter value
 */
export function searchPredicate(text: string): Predicate | null | string {
  if (text.length > MAX_FILTER_LENGTH) return `is ${text.length} characters long; at most ${MAX_FILTER_LENGTH} are accepted`;
  const terms = text.split(/\s+/u).filter((t) => t !== "");
  return terms.length === 0 ? null : { kind: "search", terms };
}

/** The normalized echo of a search predicate: its terms joined by one space. */
export function searchEcho(predicate: Predicate & { kind: "search" }): string {
  return predicate.terms.join(" ");
}
