/**
 * The schema a restricted scope is told (docs/api.md "Access control"): an enum column's
 * value list is its declared values (a schema file's, a database enum type's), else the values
 * present in the scope's rows, never values only other rows hold. What `/schema` and the OpenAPI
 * document show, and what the scope's requests are parsed against (so that a set filter on a
 * value outside its rows is the same 400, listing the same values, as on a table without it).
 */
import { MAX_FACET_LIMIT } from "../query/facets.ts";
import type { Predicate } from "../query/types.ts";
import type { ColumnSpec, Schema } from "../schema/kinds.ts";
import type { Engine } from "./execute.ts";
import { computeFacets } from "./facets.ts";
import { type VersionScope, viewVersion } from "./view-version.ts";

/** A scope as an access role's view (access/view.ts `RoleView`) holds it: the schema it sees and its rows. */
export interface SchemaScope extends VersionScope {
  /** The columns it sees (the store's schema cut to them). */
  schema: Schema;
  filter: Predicate | null;
}

/** Per scope object: the schema of the last version token asked for (a batch that changes none of its rows keeps it). */
const schemas = new WeakMap<SchemaScope, { token: string; schema: Schema }>();

/** Per scope object: its schema without the partition column. */
const unpartitioned = new WeakMap<SchemaScope, Schema>();

/** The scope's schema with `partition` null (made once per scope). */
function withoutPartition(scope: SchemaScope): Schema {
  if (scope.schema.partition === null) return scope.schema;
  let schema = unpartitioned.get(scope);
  if (schema === undefined) {
    schema = { ...scope.schema, partition: null };
    unpartitioned.set(scope, schema);
  }
  return schema;
}

/**
 * The schema `scope` is told in `engine`'s version: the store's without a scope, the scope's own
 * when it sees every row and column; else its own with `partition` null (the store build chooses
 * the partition column by the values the whole table holds) and each inferred enum's values
 * (kinds.ts `ColumnSpec.inferred`) cut to those present in its rows (in the column's order). Computed once per version token of the scope
 * (view-version.ts: unchanged by a batch that changes none of its rows), by counting the
 * enums' values over its rows (engine/facets.ts).
 * @param token the scope's version token in `engine`'s version when the caller has it
 *   (view-version.ts `viewVersion`, perhaps computed in slices); absent: computed here, at once
 * @returns the schema (a spec's `values` array may be shared: never change it)
 */
export function scopeSchema(engine: Engine, scope: SchemaScope | null, token?: string): Schema {
  if (scope === null) return engine.store.schema;
  if (scope.unrestricted) return scope.schema;
  const inferred = scope.schema.columns.filter((c) => c.inferred === true);
  if (inferred.length === 0) return withoutPartition(scope);
  const version = token ?? viewVersion(engine, scope);
  const cached = schemas.get(scope);
  if (cached !== undefined && cached.token === version) return cached.schema;
  const answer = computeFacets(engine, { columns: inferred.map((c) => c.id), filter: null, scope: scope.filter, limit: MAX_FACET_LIMIT, search: null });
  const columns = scope.schema.columns.map((spec): ColumnSpec => {
    const facet = spec.inferred === true ? answer.facets[spec.id] : undefined;
    if (facet === undefined || !("values" in facet)) return spec;
    const present = new Set(facet.values.map((v) => v.value));
    return { ...spec, values: (spec.values ?? []).filter((v) => present.has(v)) };
  });
  const schema: Schema = { ...scope.schema, columns, partition: null };
  schemas.set(scope, { token: version, schema });
  return schema;
}
