/**
 * The column kinds, each as its module (kind.ts), in one table: the only place that maps a
 * kind's name to its code. Adding a kind is a module and a line here.
 */
import type { RawColumn } from "../schema/raw-column.ts";
import type { ColumnKind, ColumnSpec } from "../schema/kinds.ts";
import type { ConvertedColumn } from "./convert.ts";
import { BOOLEAN_KIND, ENUM_KIND } from "./coded.ts";
import { DATE_KIND, DATETIME_KIND } from "./date.ts";
import type { KindModule } from "./kind.ts";
import { JSON_KIND } from "./json.ts";
import { NUMBER_KIND } from "./number.ts";
import { TEXT_KIND } from "./text.ts";

/** Every kind's module, by kind (docs/api.md "Any users table: the schema" lists the kinds). */
export const KINDS: Record<ColumnKind, KindModule> = {
  number: NUMBER_KIND,
  text: TEXT_KIND,
  enum: ENUM_KIND,
  date: DATE_KIND,
  datetime: DATETIME_KIND,
  boolean: BOOLEAN_KIND,
  json: JSON_KIND,
};

/**
 * Converts a raw column to `spec`'s kind (declared, or inferred from its profile), by that kind.
 * @throws ConversionError (convert.ts) for the first row whose value does not fit: `column "age"
 *   (number): "x" is not a number in JSON syntax`, a JSON string in a number column, a value
 *   outside an enum's values…
 */
export function convertColumn(raw: RawColumn, spec: ColumnSpec): ConvertedColumn {
  return KINDS[spec.kind].convert(raw, spec);
}


/** The kind of each PostgreSQL type a kind lists (kind.ts `postgresTypes`), by OID. */
const KIND_OF_POSTGRES_TYPE = new Map<number, ColumnKind>(Object.values(KINDS).flatMap((module) => module.postgresTypes.map((oid) => [oid, module.kind] as const)));

/** The kind a PostgreSQL column of built-in type `oid` has, or undefined (an enum type, or a type no kind holds). */
export function kindOfPostgresType(oid: number): ColumnKind | undefined {
  return KIND_OF_POSTGRES_TYPE.get(oid);
}
