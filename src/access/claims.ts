/**
 * Claim references in a role's filter model (docs/api.md "Access control"): a filter value
 * written `{"claim": NAME}` stands for the value of the credential's claim NAME — a JWT's
 * payload member, or a key's `claims` entry. Where a reference may stand, what it is replaced
 * with, and the stand-in values the policy is checked with at start-up.
 */
import type { ColumnSpec } from "../schema/kinds.ts";

/** The fields of a simple AG Grid filter model whose value a claim may give. */
export const CLAIM_FIELDS = ["filter", "filterTo", "dateFrom", "dateTo", "values"] as const;

/** What a claim name must look like: a JSON member name of 1 to 256 characters. */
export const MAX_CLAIM_NAME = 256;

/** One claim reference found in a filter model. */
export interface ClaimRef {
  /** The claim's name. */
  name: string;
  /**
   * Where it stands, as JSON pointer tokens below the filter model: `[column, field]`,
   * `[column, "values", i]`, or the same under `[column, "conditions", j, …]`.
   */
  path: (string | number)[];
}

/** A problem found in a filter model's claim references: where, and what is wrong. */
export interface ClaimProblem {
  path: (string | number)[];
  detail: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for an object with a `claim` member: meant as a claim reference (valid or not). */
function looksLikeRef(value: unknown): value is Record<string, unknown> {
  return isObject(value) && Object.hasOwn(value, "claim");
}

/** The claim name of a well-formed reference `{"claim": "<name>"}`, or the reason it is not one. */
function refName(value: Record<string, unknown>): string | { problem: string } {
  const keys = Object.keys(value);
  const name = value.claim;
  if (keys.length !== 1) return { problem: `a claim reference is {"claim": "<name>"} and nothing else (got the members ${keys.map((k) => JSON.stringify(k)).join(", ")})` };
  if (typeof name !== "string" || name === "" || name.length > MAX_CLAIM_NAME) {
    return { problem: `a claim reference names its claim with a string of 1 to ${MAX_CLAIM_NAME} characters (got ${JSON.stringify(name)?.slice(0, 80)})` };
  }
  return name;
}

/**
 * Every claim reference of a role's filter model, and every misplaced or malformed one: a
 * reference may stand for a simple model's `filter`, `filterTo`, `dateFrom`, `dateTo`, for its
 * whole `values` list or for one value of it, in a column's model or in one of its `conditions`.
 * @param filterModel `{ <column>: model }` as the policy gives it
 */
export function findClaims(filterModel: Record<string, unknown>): { refs: ClaimRef[]; problems: ClaimProblem[] } {
  const refs: ClaimRef[] = [];
  const problems: ClaimProblem[] = [];
  const visit = (value: unknown, path: (string | number)[], allowed: boolean): void => {
    if (looksLikeRef(value)) {
      const name = refName(value);
      if (typeof name !== "string") problems.push({ path, detail: name.problem });
      else if (!allowed) problems.push({ path, detail: `a claim may stand only for a filter value (${CLAIM_FIELDS.join(", ")}, or one of the values)` });
      else refs.push({ name, path });
      return;
    }
    if (Array.isArray(value)) {
      const inValues = path[path.length - 1] === "values";
      value.forEach((item, i) => visit(item, [...path, i], allowed && inValues));
      return;
    }
    if (!isObject(value)) return;
    for (const [key, member] of Object.entries(value)) {
      // a column's model (depth 1) and its conditions' members may hold references in their value fields
      const inModel = path.length === 1 || (path.length >= 3 && path[path.length - 2] === "conditions");
      visit(member, [...path, key], inModel && (CLAIM_FIELDS as readonly string[]).includes(key));
    }
  };
  for (const [column, model] of Object.entries(filterModel)) visit(model, [column], false);
  return { refs, problems };
}

/** Why a credential's claims do not give a role's filter: a claim it lacks (or holds as null). */
export interface MissingClaim {
  missing: string;
}

/**
 * The filter model with every claim reference replaced by the claim's value from `claims`: a
 * reference standing for a whole `values` list takes an array claim as it is and any other
 * value as a list of one. A deep copy; `filterModel` is left as it was.
 * @param claims the credential's claims by name (a JWT's payload, a key's `claims`)
 * @returns the model, or the first claim that is absent or null (a credential cannot widen its
 *   rows by leaving a claim out)
 */
export function substituteClaims(filterModel: Record<string, unknown>, claims: Readonly<Record<string, unknown>>): { model: Record<string, unknown> } | MissingClaim {
  let missing: string | null = null;
  const copy = (value: unknown, key: string | number | null): unknown => {
    if (looksLikeRef(value)) {
      const name = value.claim as string;
      const claim = Object.hasOwn(claims, name) ? claims[name] : undefined;
      if (claim === undefined || claim === null) {
        missing ??= name;
        return null;
      }
      return key === "values" && !Array.isArray(claim) ? [claim] : claim;
    }
    if (Array.isArray(value)) return value.map((item) => copy(item, null));
    if (!isObject(value)) return value;
    // no prototype: a column may be named `__proto__`
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, member] of Object.entries(value)) out[k] = copy(member, k);
    return out;
  };
  const model = copy(filterModel, null) as Record<string, unknown>;
  return missing === null ? { model } : { missing };
}

/**
 * A stand-in for a claim's value while a policy is checked at start-up, when no credential is
 * at hand: a value of the column's kind, so that the rest of the model is checked as a real
 * request's would be (the reference's own value is checked per credential).
 * @param field the model field the reference stands for (`values` for a list or one of its values)
 * @param filterType the model's `filterType`
 */
export function standIn(spec: ColumnSpec, field: string, filterType: unknown): unknown {
  if (field === "dateFrom" || field === "dateTo") return "2000-01-01";
  if ((field === "filter" || field === "filterTo") && filterType === "number") return 0;
  if (field === "filter" || field === "filterTo") return "x";
  switch (spec.kind) {
    case "enum":
      return (spec.values as string[])[0];
    case "boolean":
      return true;
    case "number":
      return 0;
    case "date":
      return "2000-01-01";
    case "datetime":
      return "2000-01-01T00:00:00.000Z";
    default:
      return "x";
  }
}
