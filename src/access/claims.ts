/**
 * Claim references in a role's filter model (docs/api.md "Access control"): a filter value
 * written `{"claim": NAME}` stands for the value of the credential's claim NAME — a JWT's
 * payload member, or a key's `claims` entry. Where a reference may stand, and what it is replaced
 * with: the claim's value converted by the kind of the column it filters (docs/api.md "Access
 * control", claims).
 */
import { KINDS } from "../kinds/registry.ts";
import { type Schema, columnSpec } from "../schema/kinds.ts";

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

/**
 * A claim's value as the filter value it stands for (kind.ts `claimValue`): a finite number or a
 * string; for a reference standing for a whole `values` list, a list of them.
 */
export type ClaimValue = number | string | (number | string)[];

/** Why a credential's claims do not give a role's filter: a claim it lacks (or holds as null), or one whose value the column's kind cannot take. */
export interface ClaimRefusal {
  reason: "missing_claim" | "invalid_claim";
  /** The claim's name. */
  claim: string;
  /** What is wrong, naming the claim (never more than 80 characters of its value): `the claim "org_id" must be …, not …`. */
  detail: string;
}

/** Most characters of a claim's value a refusal shows. */
const SHOWN_CHARS = 80;

/** A claim's value for a refusal's detail: JSON, cut; a number beyond a double's range said so. */
function shownClaim(value: unknown): string {
  if (typeof value === "number" && !Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : "a number beyond the range of a double";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object" && value !== null) return "an object";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
}

/**
 * The credential's value of each claim reference of a role's filter, converted by the kind of
 * the reference's column (docs/api.md "Access control", claims; kind.ts `claimValue`): a finite
 * number, a string or a boolean as the column's kind needs (a numeric string converts for a
 * number column); a reference standing for a whole `values` list takes a list claim as it is
 * (each item converted) and any other value as a list of one. The result is canonical and typed:
 * two credentials give equal values exactly when their filters are equal, so the values (as
 * JSON) key a role's views (view.ts).
 * @param refs the role's references (policy.ts `RoleSpec.refs`), in the model's order
 * @returns a value per reference, or the first refusal: a claim absent or null (`missing_claim`),
 *   or one whose value (or an item of its list) the kind cannot take — an object, a list where
 *   one value goes, a number beyond a double's range (JSON's `1e999`), a non-numeric string for a
 *   number column, … (`invalid_claim`)
 */
export function convertClaims(refs: readonly ClaimRef[], claims: Readonly<Record<string, unknown>>, schema: Schema): ClaimValue[] | ClaimRefusal {
  const values: ClaimValue[] = [];
  for (const ref of refs) {
    const claim = Object.hasOwn(claims, ref.name) ? claims[ref.name] : undefined;
    if (claim === undefined || claim === null) return { reason: "missing_claim", claim: ref.name, detail: `the claim ${JSON.stringify(ref.name)} is absent or null` };
    const spec = columnSpec(schema, ref.path[0]);
    if (spec === undefined) throw new Error(`internal: a claim reference under column ${JSON.stringify(ref.path[0])}, which the schema lacks`);
    const kind = KINDS[spec.kind];
    const refuse = (what: unknown): ClaimRefusal => ({
      reason: "invalid_claim",
      claim: ref.name,
      detail: `the claim ${JSON.stringify(ref.name)} must be ${kind.claimForm} for column "${spec.id}" (${spec.kind}), not ${shownClaim(what)}`,
    });
    const wholeList = ref.path[ref.path.length - 1] === "values";
    if (wholeList && Array.isArray(claim)) {
      const list: (number | string)[] = [];
      for (const item of claim) {
        const value = kind.claimValue(spec, item);
        if (value === null) return refuse(item);
        list.push(value);
      }
      values.push(list);
      continue;
    }
    const value = kind.claimValue(spec, claim);
    if (value === null) return refuse(claim);
    values.push(wholeList ? [value] : value);
  }
  return values;
}

/** The key of a list of converted claim values: their JSON (finite numbers and strings: equal lists, equal keys, and no two lists share one). */
export function claimsKey(values: readonly ClaimValue[]): string {
  return JSON.stringify(values);
}

/** A reference's path as one string (a map key). */
const pathKey = (path: readonly (string | number)[]) => path.join("\u0000");

/**
 * The filter model with every claim reference replaced by its converted value ({@link
 * convertClaims}, same order as `refs`). A deep copy; `filterModel` is left as it was.
 */
export function substituteClaims(filterModel: Record<string, unknown>, refs: readonly ClaimRef[], values: readonly ClaimValue[]): Record<string, unknown> {
  const byPath = new Map<string, ClaimValue>(refs.map((ref, i) => [pathKey(ref.path), values[i]]));
  const copy = (value: unknown, path: (string | number)[]): unknown => {
    if (looksLikeRef(value)) {
      const substituted = byPath.get(pathKey(path));
      if (substituted === undefined) throw new Error(`internal: no value for the claim reference at ${path.join(".")}`);
      return Array.isArray(substituted) ? [...substituted] : substituted;
    }
    if (Array.isArray(value)) return value.map((item, i) => copy(item, [...path, i]));
    if (!isObject(value)) return value;
    // no prototype: a column may be named `__proto__`
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, member] of Object.entries(value)) out[k] = copy(member, [...path, k]);
    return out;
  };
  const out: Record<string, unknown> = Object.create(null);
  for (const [column, model] of Object.entries(filterModel)) out[column] = copy(model, [column]);
  return out;
}
