/**
 * A role's view of the served table (docs/api.md "Access control"): the schema it sees (its
 * columns alone, so that a hidden column is exactly an unknown one to every request parser), the
 * projection its records are cut to, its filter (the role's filter model with the credential's
 * claims, compiled once into the engine's predicate), and the searchable columns a search of
 * its looks into. Views are compiled once per role, claims and schema and kept in a cache
 * bounded by bytes, so that thousands of tenants cost at most that much.
 */
import { ByteLru } from "../bits/byte-lru.ts";
import type { Predicate } from "../query/types.ts";
import { type ColumnSpec, type Schema, columnSpec } from "../schema/kinds.ts";
import { type Projection, projectionOf } from "../store/record-fields.ts";
import { isSearchable } from "../store/types.ts";
import { type ClaimValue, claimsKey, convertClaims } from "./claims.ts";
import { type RoleSpec, roleFilterOf } from "./policy.ts";

/** What one role with one credential's claims sees. */
export interface RoleView {
  role: string;
  /** The schema the view was compiled for (the served snapshot's; a reload to another schema makes new views). */
  base: Schema;
  /**
   * What the role sees: its columns in schema order, the key, and the partition column when it
   * is one of them (else null). What every request of the role is parsed against.
   */
  schema: Schema;
  /** The members its records keep, or null when it sees every column. */
  projection: Projection | null;
  /** Its rows: the role's filter with the claims put in, or null for every row. */
  filter: Predicate | null;
  /** The searchable columns it sees, when it does not see them all (a search then looks into these alone); else null. */
  searchColumns: string[] | null;
  /**
   * The policy's id, the role and the converted values of the claims its filter names: what its
   * answers depend on besides the request (part of every entity tag, so that a 304 never crosses
   * roles or tenants, nor a policy reload that changed the role).
   */
  tag: string;
  /** True when it sees every row and every column (what reading the metrics needs). */
  unrestricted: boolean;
}

/** Why a credential gets no view: a claim its role needs is absent, or its value does not fit the role's filter (its column's kind, or the filter), or the policy does not fit the snapshot. */
export interface ViewRefusal {
  reason: "missing_claim" | "invalid_claim" | "policy_mismatch";
  /** For the client's problem body (never a secret). */
  detail: string;
}

/**
 * The cache key of a view, and its entity tag part: the role and the converted values of the
 * claims its filter reads (claims.ts `convertClaims`, canonical and typed), so that credentials
 * that differ in a claim's value never share a view, and those whose values convert alike do.
 */
export function viewKey(role: RoleSpec, values: readonly ClaimValue[]): string {
  if (role.refs.length === 0) return role.name;
  return `${role.name}\u0000${claimsKey(values)}`;
}

/** The schema a role sees: its columns in schema order; the partition when it sees it. */
export function roleSchema(role: RoleSpec, schema: Schema): Schema {
  if (role.columns === "*") return schema;
  const shown = new Set(role.columns);
  const columns: ColumnSpec[] = schema.columns.filter((c) => shown.has(c.id));
  return { columns, key: schema.key, partition: schema.partition !== null && shown.has(schema.partition) ? schema.partition : null };
}

/** What a view takes from its role alone, whatever the claims: made once per role and schema, shared by its views. */
export interface RoleShape {
  schema: Schema;
  projection: Projection | null;
  searchColumns: string[] | null;
}

/**
 * The columns side of `role` over `schema`: the schema it sees, the projection of the records
 * onto it, the searchable columns it sees when it does not see them all.
 * @returns the shape, or a refusal when the role names columns the schema lacks (a snapshot loaded since the policy was checked)
 */
export function roleShape(role: RoleSpec, schema: Schema): RoleShape | ViewRefusal {
  if (role.columns !== "*") {
    const absent = role.columns.filter((id) => columnSpec(schema, id) === undefined);
    if (absent.length > 0 || !role.columns.includes(schema.key)) {
      return { reason: "policy_mismatch", detail: `role "${role.name}" names columns the served snapshot lacks (${absent.join(", ") || `its key ${schema.key}`})` };
    }
  }
  const shown = roleSchema(role, schema);
  const hides = shown.columns.length < schema.columns.length;
  const searchable = schema.columns.filter((c) => isSearchable(schema, c)).map((c) => c.id);
  const visibleSearchable = shown.columns.filter((c) => isSearchable(schema, c)).map((c) => c.id);
  return {
    schema: shown,
    projection: hides ? projectionOf(schema, shown.columns.map((c) => c.id)) : null,
    searchColumns: visibleSearchable.length < searchable.length ? visibleSearchable : null,
  };
}

/**
 * Compiles the view of `role` with `claims` over `schema`.
 * @param shape the role's shape over `schema` ({@link roleShape}), made here when not given
 * @param values the claims' values converted ({@link claimValuesOf}), converted here when not given
 * @returns the view, or why the credential gets none (a claim absent or null, a claim value that
 *   its column's kind cannot take or that does not fit the filter, or a policy that does not fit
 *   a snapshot loaded since it was checked)
 */
export function compileView(
  role: RoleSpec,
  claims: Readonly<Record<string, unknown>>,
  schema: Schema,
  policyId = "",
  shape: RoleShape | ViewRefusal = roleShape(role, schema),
  values: readonly ClaimValue[] | ViewRefusal = claimValuesOf(role, claims, schema),
): RoleView | ViewRefusal {
  if ("reason" in shape) return shape;
  if ("reason" in values) return values;
  const compiled = roleFilterOf(role, values, schema);
  if (typeof compiled === "string") return { reason: "invalid_claim", detail: `the credential's claims do not fit role "${role.name}"'s filter: ${compiled.length > 300 ? `${compiled.slice(0, 300)}…` : compiled}` };
  return {
    role: role.name,
    base: schema,
    schema: shape.schema,
    projection: shape.projection,
    filter: compiled.filter,
    searchColumns: shape.searchColumns,
    tag: `${policyId}\u0000${viewKey(role, values)}`,
    unrestricted: shape.projection === null && compiled.filter === null,
  };
}

/**
 * The values of the claims `role`'s filter reads, converted by their columns' kinds (claims.ts
 * `convertClaims`), or why the credential gets no view: a claim absent or null (`missing_claim`),
 * or one its column's kind cannot take (`invalid_claim`), each naming the claim.
 */
export function claimValuesOf(role: RoleSpec, claims: Readonly<Record<string, unknown>>, schema: Schema): readonly ClaimValue[] | ViewRefusal {
  if (role.refs.length === 0) return [];
  const converted = convertClaims(role.refs, claims, schema);
  if (Array.isArray(converted)) return converted;
  if (converted.reason === "missing_claim") return { reason: "missing_claim", detail: `role "${role.name}" needs the claim ${JSON.stringify(converted.claim)}, which the credential lacks` };
  return { reason: "invalid_claim", detail: `the credential's claims do not fit role "${role.name}"'s filter: ${converted.detail}` };
}

/**
 * Bytes a cached view is counted as: the entry, its key (twice: the map's and the tag), its filter
 * (the predicate, and the text of the engine's cache key of it: about its JSON's length, 6 bytes
 * a character for both); its role's shape is shared.
 */
function viewBytes(key: string, view: RoleView | ViewRefusal): number {
  if ("reason" in view) return 256 + 2 * key.length + 2 * view.detail.length;
  const filterBytes = view.filter === null ? 0 : 6 * JSON.stringify(view.filter).length;
  return 512 + 4 * key.length + filterBytes;
}

/** Default budget of the view cache, in bytes: tens of thousands of tenants' views. */
export const VIEW_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * The views of one policy, compiled on first use per role, claims and schema and kept in a
 * byte-bounded LRU (bits/byte-lru.ts); a schema other than the last one's empties it (a new
 * policy gets a new cache).
 */
export class ViewCache {
  private readonly views: ByteLru<RoleView | ViewRefusal>;
  /** Each role's shape over {@link schema} (as many as the policy has roles). */
  private readonly shapes = new Map<string, RoleShape | ViewRefusal>();
  private schema: Schema | null = null;

  /**
   * @param policyId the policy's id (policy.ts `AccessPolicy.id`), put in every view's tag
   * @param maxBytes the cache's budget, in bytes
   */
  constructor(
    private readonly policyId: string,
    maxBytes = VIEW_CACHE_BYTES,
  ) {
    this.views = new ByteLru(maxBytes);
  }

  /** The view of `role` with `claims` over `schema`, or why there is none (see {@link compileView}). */
  viewOf(role: RoleSpec, claims: Readonly<Record<string, unknown>>, schema: Schema): RoleView | ViewRefusal {
    if (schema !== this.schema) {
      this.views.clear();
      this.shapes.clear();
      this.schema = schema;
    }
    // the claims converted first: a refused value is refused before any cache is read, and the
    // converted values key the view (equal values, one view; different values, never)
    const values = claimValuesOf(role, claims, schema);
    if ("reason" in values) return values;
    const key = viewKey(role, values);
    const cached = this.views.get(key);
    if (cached !== undefined) return cached;
    let shape = this.shapes.get(role.name);
    if (shape === undefined) {
      shape = roleShape(role, schema);
      this.shapes.set(role.name, shape);
    }
    const view = compileView(role, claims, schema, this.policyId, shape, values);
    this.views.set(key, view, viewBytes(key, view));
    return view;
  }

  /** Views held now. */
  get size(): number {
    return this.views.size;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.views.bytes;
  }
}
