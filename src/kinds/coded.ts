/**
 * The kinds whose values are a few named codes (docs/api.md "Any users table"): `enum`
 * (code i + 1 for `values[i]`, ordered in `values` order) and `boolean` (1 false, 2 true, false
 * before true). Text filters on the value, set filters and GET `filter[col]` on whole values,
 * folded, a comma list meaning any of them.
 */
import { fold } from "../collation/collation.ts";
import { type ConvertedColumn, convertBoolean, convertEnum } from "./convert.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import type { GetFilter, KindModule } from "./kind.ts";
import { orderedKind } from "./ordered.ts";

/** Codes as stored doubles: 0 (null) → NaN. */
function storedCodes(c: ConvertedColumn): Float64Array {
  const codes = (c as Extract<ConvertedColumn, { kind: "enum" | "boolean" }>).codes;
  const out = new Float64Array(codes.length);
  for (let i = 0; i < codes.length; i++) out[i] = codes[i] === 0 ? Number.NaN : codes[i];
  return out;
}

/** The value names of a coded column, code i + 1 for names[i]. */
function namesOf(spec: ColumnSpec): readonly string[] {
  return spec.kind === "boolean" ? BOOLEAN_NAMES : (spec.values ?? []);
}

const BOOLEAN_NAMES = ["false", "true"] as const;

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

/** The `enum` kind. */
export const ENUM_KIND: KindModule = orderedKind(
  "enum",
  {
    storedValues: storedCodes,
    format: (spec, code) => namesOf(spec)[code - 1],
    json: (spec, code) => JSON.stringify(namesOf(spec)[code - 1]),
    valuesOf: codesOf,
  },
  {
    facet: "values",
    convert: convertEnum,
    getFormDoc: () => "A value, or a comma list meaning any of them; any case.",
    filterTypes: ["text", "set"],
    searchable: true,
    keyKind: false,
    dayInterval: null,
    getFilter: codedGetFilter,
    setValue: codedSetValue,
    jsonSchema: (spec) => ({ type: ["string", "null"], enum: [...(spec.values ?? []), null] }),
    // an enum type of the database (pg_type.typtype 'e'), whatever its OID
    postgresTypes: [],
  },
);

/** The `boolean` kind. */
export const BOOLEAN_KIND: KindModule = orderedKind(
  "boolean",
  {
    storedValues: storedCodes,
    format: (_spec, code) => BOOLEAN_NAMES[code - 1],
    json: (_spec, code) => BOOLEAN_NAMES[code - 1],
    valuesOf: codesOf,
  },
  {
    facet: "values",
    convert: convertBoolean,
    getFormDoc: () => '"true" or "false", any case; "true,false" is either.',
    filterTypes: ["text", "set"],
    searchable: false,
    keyKind: false,
    dayInterval: null,
    getFilter: codedGetFilter,
    setValue: codedSetValue,
    jsonSchema: () => ({ type: ["boolean", "null"] }),
    // bool
    postgresTypes: [16],
  },
);
