/**
 * Column lookups the request parsers share: a column id named in a request against the served
 * snapshot's schema (docs/api.md "Columns beyond the four").
 */
import type { ColumnSpec, Schema } from "../schema/kinds.ts";

/** The schema's column named `id`, or undefined (also for a non-string). */
export function columnOf(schema: Schema, id: unknown): ColumnSpec | undefined {
  if (typeof id !== "string") return undefined;
  for (const c of schema.columns) if (c.id === id) return c;
  return undefined;
}

/** The schema's column ids, for an "unknown column" message. */
export function columnList(schema: Schema): string {
  return schema.columns.map((c) => c.id).join(", ");
}

