/**
 * Column lookups the request parsers share: a column id named in a request against the served
 * snapshot's schema (docs/api.md "Any users table: the schema"), and what an error says of an unknown one.
 */
import { type ColumnSpec, type Schema, columnSpec } from "../schema/kinds.ts";
import type { Predicate } from "./types.ts";

/** The schema's column named `id`, or undefined (also for a non-string). */
export function columnOf(schema: Schema, id: unknown): ColumnSpec | undefined {
  return columnSpec(schema, id);
}

/** The schema's column ids, for an "unknown column" message. */
export function columnList(schema: Schema): string {
  return schema.columns.map((c) => c.id).join(", ");
}

/** Longest column name an error repeats, in UTF-16 code units: an error never echoes a large input. */
const MAX_SHOWN_NAME = 80;

/**
 * The message for a name that is no column of the schema: the name (cut to 80 characters) and
 * the valid columns (docs/api.md "Errors").
 */
export function unknownColumn(schema: Schema, name: unknown): string {
  let text = JSON.stringify(name) ?? String(name);
  if (text.length > MAX_SHOWN_NAME) text = `${text.slice(0, MAX_SHOWN_NAME)}…`;
  return `unknown column ${text}; valid columns: ${columnList(schema)}`;
}


/**
 * The columns a predicate tests; a search tests none of its own (docs/api.md "Global search": it
 * is no column's filter).
 */
function predicateColumns(p: Predicate, out: Set<string>): Set<string> {
  switch (p.kind) {
    case "and":
    case "or":
      for (const child of p.children) predicateColumns(child, out);
      break;
    case "search":
      out.add("");
      break;
    default:
      out.add(p.column);
  }
  return out;
}

/**
 * The filter without `column`'s own filter (docs/api.md "Facets": a column's counts are taken
 * over the rows matching every filter except its own): the parts of a top-level AND (nested
 * ANDs too) that test `column` alone are dropped; null when nothing is left.
 */
export function withoutColumn(filter: Predicate | null, column: string): Predicate | null {
  if (filter === null) return null;
  const columns = predicateColumns(filter, new Set());
  if (columns.size === 1 && columns.has(column)) return null;
  if (filter.kind !== "and" || !columns.has(column)) return filter;
  const children = filter.children.map((c) => withoutColumn(c, column)).filter((c): c is Predicate => c !== null);
  return children.length === 0 ? null : children.length === 1 ? children[0] : { kind: "and", children };
}

/**
 * `filter` within `scope`: their AND (the scope first), or whichever is not null (null when
 * both are). A facets request's counts and an access role's every request are taken within the
 * role's rows this way (docs/api.md "Access control").
 */
export function withinScope(scope: Predicate | null | undefined, filter: Predicate | null): Predicate | null {
  if (scope === null || scope === undefined) return filter;
  if (filter === null) return scope;
  return { kind: "and", children: [scope, filter] };
}
