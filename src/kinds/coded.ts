/**
 * The kinds whose values are a few named codes (docs/api.md "Any users table: the schema"): `enum`
 * (code i + 1 for `values[i]`, ordered in `values` order) and `boolean` (1 false, 2 true, false
 * before true). Text filters on the value, set filters and GET `filter[col]` on whole values,
 * folded, a comma list meaning any of them.
 */
import { fold } from "../collation/collation.ts";
import { BOOLEAN_VALUES, CODES, type ConvertedColumn, convertBoolean, convertEnum } from "./convert.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import { parseBooleanText } from "../schema/values.ts";
import type { GetFilter, KindModule } from "./kind.ts";
import { orderedKind } from "./ordered.ts";

/** The value names of a coded column, code i + 1 for names[i]. */
function namesOf(spec: ColumnSpec): readonly string[] {
  return spec.kind === "boolean" ? BOOLEAN_VALUES : (spec.values ?? []);
}

/** The codes whose folded name is `folded`. */
function codesOf(spec: ColumnSpec, folded: string): number[] {
  const names = namesOf(spec);
  const codes: number[] = [];
  for (let i = 0; i < names.length; i++) if (fold(names[i]) === folded) codes.push(i + 1);
  return codes;
}

/**
 * GET `filter[col]` on a coded column: a comma list of whole values, folded; a value the column
 * cannot hold is a 400 listing the valid ones (as for `status`, docs/api.md "Matching").
 */
function codedGetFilter(spec: ColumnSpec, value: string): GetFilter | string {
  const names = namesOf(spec);
  const picked = new Set<number>();
  for (const item of value.split(",")) {
    const v = item.trim();
    if (v === "") continue;
    const codes = codesOf(spec, fold(v));
    if (codes.length === 0) return `"${v}" is not a value of ${spec.id}; valid values: ${names.join(", ")}`;
    for (const c of codes) picked.add(c);
  }
  if (picked.size === 0) return `no value given; valid values: ${names.join(", ")}`;
  const codes = [...picked].sort((a, b) => a - b);
  const chosen = codes.map((c) => names[c - 1]);
  return { tests: [{ op: "set", values: chosen.map(fold), nulls: false }], echo: chosen.join(",") };
}

/** A set value of a coded column: folded when the column can hold it, else refused. */
function codedSetValue(spec: ColumnSpec, text: string): string | { reason: string } {
  const folded = fold(text);
  if (codesOf(spec, folded).length > 0) return folded;
  return { reason: `"${text}" is not a value of ${spec.id}; valid values: ${namesOf(spec).join(", ")}` };
}

/** Distinct non-null codes of a coded column's converted values (what a partition's groups are: store/build.ts `choosePartition`). */
function distinctCodes(converted: ConvertedColumn): number {
  const codes = (converted as Extract<ConvertedColumn, { codes: Uint8Array }>).codes;
  const seen = new Uint8Array(256);
  let d = 0;
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i];
    if (code !== 0 && seen[code] === 0) {
      seen[code] = 1;
      d++;
    }
  }
  return d;
}

/** The `enum` kind. */
export const ENUM_KIND: KindModule = orderedKind(
  "enum",
  {
    ...CODES,
    format: (spec, code) => namesOf(spec)[code - 1],
    json: (spec, code) => JSON.stringify(namesOf(spec)[code - 1]),
    valuesOf: codesOf,
  },
  {
    facet: "codes",
    convert: convertEnum,
    getFormDoc: () => "A value, or a comma list meaning any of them; any case.",
    filterTypes: ["text", "set"],
    searchable: true,
    dayInterval: null,
    getFilter: codedGetFilter,
    setValue: codedSetValue,
    jsonSchema: (spec) => ({ type: ["string", "null"], enum: [...(spec.values ?? []), null] }),
    recordValue: "string",
    partitionValues: distinctCodes,
    claimValue: (_spec, value) => (typeof value === "string" ? value : null),
    claimForm: "a string (one of the column's values)",
    example: (spec) => (spec.values ?? [])[0] ?? "",
    postgresValue: null,
    // an enum type of the database (pg_type.typtype 'e'), whatever its OID
    postgresTypes: [],
  },
);

/** The `boolean` kind. */
export const BOOLEAN_KIND: KindModule = orderedKind(
  "boolean",
  {
    ...CODES,
    format: (_spec, code) => BOOLEAN_VALUES[code - 1],
    json: (_spec, code) => BOOLEAN_VALUES[code - 1],
    valuesOf: codesOf,
  },
  {
    facet: "codes",
    convert: convertBoolean,
    getFormDoc: () => '"true" or "false", any case; "true,false" is either.',
    filterTypes: ["text", "set"],
    searchable: false,
    dayInterval: null,
    getFilter: codedGetFilter,
    setValue: codedSetValue,
    jsonSchema: () => ({ type: ["boolean", "null"] }),
    recordValue: "bare",
    claimValue(_spec, value) {
      if (typeof value === "boolean") return value ? "true" : "false";
      if (typeof value !== "string") return null;
      const b = parseBooleanText(value);
      return b < 0 ? null : BOOLEAN_VALUES[b];
    },
    claimForm: "true or false (a boolean, or either word as a string)",
    example: () => "true",
    // PostgreSQL writes a bool as t or f
    postgresValue: (text) => text === "t",
    // bool
    postgresTypes: [16],
  },
);
