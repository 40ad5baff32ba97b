/**
 * Random tables of any shape and random requests over them, for the property tests of the engine
 * against the naive oracle (test/engine/table-property.test.ts, test/engine/live-property.test.ts):
 * a number or a text key, with or without `name`, `email` and `status`, enums of random values,
 * every kind, many nulls and ties; AG Grid filter and sort models and quick filters fitting them.
 */
import fc from "fast-check";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import type { OracleSortKey, Table, TableRecord } from "./table-oracle.ts";

export const NUMBERS = [-3, -1, 0, 0.5, 2, 10, 100, 2.25];
export const DATES = ["1969-12-31", "1970-01-01", "2000-02-29", "2024-03-01", "2024-03-02", "2024-12-31"];
export const DATETIMES = ["1969-12-31T23:59:59.999Z", "2024-03-01T00:00:00.000Z", "2024-03-01T10:30:00.123Z", "2024-03-01T23:59:59.999Z", "2024-03-02T00:00:00.000Z", "2023-06-15T12:00:00.000Z"];
export const TEXTS = ["", "  ", "Café", "cafe", "CAFÉ au lait", "zoë", "Zoe", "a1", "a10", "a2", "ñ", "x y", "José", "jose@x.com", "Ωmega"];
export const ENUM_WORDS = ["zeta", "Alpha", "beta", "active", "invited", "suspended", "deleted", "Ünïcode"];
/** Text keys: case and accent variants are distinct keys (they order by code point), UUID-like ones, digits. */
export const TEXT_KEYS = [
  "a", "A", "b", "B", "á", "Á", "10", "9", "z", "ä", "José", "jose", "JOSE", " x", "x ", "中", "Ωmega",
  "3f2a9c1e-0b7d-4c6e-9a1f-2d3e4f5a6b7c", "3F2A9C1E-0B7D-4C6E-9A1F-2D3E4F5A6B7C", "00000000-0000-0000-0000-000000000001",
  "ffffffff-ffff-ffff-ffff-ffffffffffff", "7c1e", "user_42", "user_7",
];
/** Ids the added columns may take: the seed's three among them, and a name that is an object's own in JS. */
export const COLUMN_IDS = ["name", "email", "status", "n", "d", "t", "e", "b", "s", "j", "__proto__", "role"];

export type Kind = ColumnSpec["kind"];

/** A column's spec: its kind (ids with a usual kind take it most of the time), an enum's declared values. */
export function specArb(id: string): fc.Arbitrary<ColumnSpec> {
  // a map: "__proto__" is one of the ids
  const usual = new Map<string, Kind>([["name", "text"], ["email", "text"], ["status", "enum"], ["n", "number"], ["d", "date"], ["t", "datetime"], ["e", "enum"], ["b", "boolean"], ["s", "text"], ["j", "json"], ["role", "enum"]]);
  const kindArb: fc.Arbitrary<Kind> = fc.oneof(
    { weight: 3, arbitrary: fc.constant(usual.get(id) ?? "text") },
    { weight: 1, arbitrary: fc.constantFrom<Kind>("number", "text", "enum", "date", "datetime", "boolean", "json") },
  );
  return kindArb.chain((kind) => {
    if (kind !== "enum") return fc.constant<ColumnSpec>({ id, kind });
    return fc.shuffledSubarray(ENUM_WORDS, { minLength: 1, maxLength: 6 }).map((values): ColumnSpec => ({ id, kind, values }));
  });
}

/** A value of a column of `spec`'s kind, null a quarter of the time. */
export function valueArb(spec: ColumnSpec): fc.Arbitrary<unknown> {
  const orNull = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: arb });
  switch (spec.kind) {
    case "number":
      return orNull(fc.constantFrom(...NUMBERS));
    case "date":
      return orNull(fc.constantFrom(...DATES));
    case "datetime":
      return orNull(fc.constantFrom(...DATETIMES));
    case "enum":
      return orNull(fc.constantFrom(...(spec.values as string[])));
    case "boolean":
      return orNull(fc.boolean());
    case "text":
      return orNull(fc.constantFrom(...TEXTS));
    case "json":
      return orNull(fc.constantFrom<unknown>({ a: 1 }, [1, "x"], "str", 5, true));
  }
}

/** A random table: its key (number or text), 1–5 other columns, 1–60 rows. */
export const tableArb: fc.Arbitrary<{ table: Table; records: TableRecord[] }> = fc
  .record({
    textKey: fc.boolean(),
    keyId: fc.constantFrom("id", "user_id", "uuid"),
    columnIds: fc.uniqueArray(fc.constantFrom(...COLUMN_IDS), { minLength: 1, maxLength: 5 }),
    // small tables mostly; some large enough for sparse posting lists (a list is a bitmap above 1/32 of the rows)
    rows: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 60 }) }, { weight: 1, arbitrary: fc.integer({ min: 61, max: 400 }) }),
  })
  .chain(({ textKey, keyId, columnIds, rows }) => {
    // text keys: the tricky ones, then generated ones (UUID-like hex and words with digits)
    const generated = fc.oneof(fc.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}$/), fc.stringMatching(/^[A-Za-zé]{1,3}[0-9]{1,3}$/));
    const keysArb: fc.Arbitrary<unknown[]> = textKey
      ? fc.tuple(fc.shuffledSubarray(TEXT_KEYS, { minLength: Math.min(rows, TEXT_KEYS.length), maxLength: Math.min(rows, TEXT_KEYS.length) }), fc.uniqueArray(generated, { minLength: Math.max(0, rows - TEXT_KEYS.length), maxLength: Math.max(0, rows - TEXT_KEYS.length) })).map(([a, b]) => [...new Set([...a, ...b])])
      : fc.uniqueArray(fc.oneof(fc.integer({ min: -40, max: 600 }), fc.constantFrom(0.5, -2.5, 1e21)), { minLength: rows, maxLength: rows });
    return fc.tuple(keysArb, fc.tuple(...columnIds.map(specArb))).chain(([keys, specs]) => {
      const keySpec: ColumnSpec = { id: keyId, kind: textKey ? "text" : "number" };
      // the key stands first, last or in between, as in real tables
      return fc.integer({ min: 0, max: specs.length }).chain((at) => {
        const all = [...specs.slice(0, at), keySpec, ...specs.slice(at)];
        const recordArb = (key: unknown) => fc.tuple(...specs.map(valueArb)).map((values) => {
          const record: TableRecord = Object.create(null);
          for (const spec of all) record[spec.id] = spec.id === keyId ? key : values[specs.indexOf(spec)];
          return { ...record };
        });
        return fc.tuple(...keys.map(recordArb)).map((records) => ({ table: { specs: all, key: keyId }, records }));
      });
    });
  });

/** Needles drawn from the table's values (pieces of their output strings) and a few fixed ones. */
export function needleArb(records: readonly TableRecord[], table: Table): fc.Arbitrary<string> {
  const cells: string[] = [];
  for (const r of records) {
    for (const spec of table.specs) {
      const v = r[spec.id];
      if (v === null || v === undefined || spec.kind === "json") continue;
      cells.push(spec.kind === "datetime" ? new Date(v as string).toISOString() : String(v));
    }
  }
  const fixed = fc.constantFrom("", "a", "caf", "É", "2024-03-01", "t10", "1", "-", "0.5", "tru", "false", "zeta", "ALPHA", " ", "z", ".123z", "3f2a", "jos", "ser_");
  if (cells.length === 0) return fixed;
  const piece = fc.constantFrom(...cells).chain((cell) => {
    const chars = Array.from(cell);
    return fc.tuple(fc.integer({ min: 0, max: chars.length }), fc.integer({ min: 1, max: 6 })).map(([i, n]) => chars.slice(i, i + n).join(""));
  });
  return fc.oneof({ weight: 2, arbitrary: piece }, { weight: 1, arbitrary: fixed }, { weight: 1, arbitrary: fc.constantFrom(...cells).map((c) => c.toUpperCase()) });
}

/** A simple AG Grid model fitting the column's kind. */
export function simpleModel(spec: ColumnSpec, records: readonly TableRecord[], table: Table): fc.Arbitrary<Record<string, unknown>> {
  const needle = needleArb(records, table);
  const textModel = fc.record({ filterType: fc.constant("text"), type: fc.constantFrom("contains", "notContains", "equals", "notEqual", "startsWith", "endsWith", "blank", "notBlank"), filter: needle });
  const present = records.map((r) => r[spec.id]).filter((v) => v !== null && v !== undefined);
  const setValue: fc.Arbitrary<unknown> =
    spec.kind === "number"
      ? fc.constantFrom<unknown>(...NUMBERS, "0.50", "10", ...present.slice(0, 5))
      : spec.kind === "enum"
        ? fc.constantFrom<unknown>(...(spec.values as string[]), ...(spec.values as string[]).map((v) => v.toUpperCase()))
        : spec.kind === "boolean"
          ? fc.constantFrom<unknown>(true, false, "TRUE", "false")
          : present.length > 0
            ? fc.oneof(fc.constantFrom(...present.map(String)), fc.constantFrom(...present.map((v) => String(v).toUpperCase())), needle)
            : needle;
  const setModel = fc.record({ filterType: fc.constant("set"), values: fc.array(fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 4, arbitrary: setValue }), { maxLength: 4 }) });
  const options: fc.Arbitrary<Record<string, unknown>>[] = [textModel, setModel];
  if (spec.kind === "number") {
    const x = fc.constantFrom<number | string>(...NUMBERS, "2", "-1", ...(present.slice(0, 4) as number[]));
    options.push(
      fc.record({ filterType: fc.constant("number"), type: fc.constantFrom("equals", "notEqual", "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual"), filter: x }),
      fc.record({ filterType: fc.constant("number"), type: fc.constant("inRange"), filter: x, filterTo: x }),
      fc.record({ filterType: fc.constant("number"), type: fc.constantFrom("blank", "notBlank") }),
    );
  }
  if (spec.kind === "date" || spec.kind === "datetime") {
    const day = fc.constantFrom("1969-12-31 00:00:00", "1970-01-01 00:00:00", "2024-03-01 00:00:00", "2024-03-02 00:00:00", "2000-02-28 00:00:00", "2024-12-31");
    options.push(
      fc.record({ filterType: fc.constant("date"), type: fc.constantFrom("equals", "notEqual", "lessThan", "greaterThan"), dateFrom: day }),
      fc.record({ filterType: fc.constant("date"), type: fc.constant("inRange"), dateFrom: day, dateTo: day }),
      fc.record({ filterType: fc.constant("date"), type: fc.constantFrom("blank", "notBlank") }),
    );
  }
  return fc.oneof(...options);
}

/** A simple model, or two of one filter type combined with AND or OR. */
export function columnModel(spec: ColumnSpec, records: readonly TableRecord[], table: Table): fc.Arbitrary<Record<string, unknown>> {
  const simple = simpleModel(spec, records, table);
  return fc.oneof(
    { weight: 3, arbitrary: simple },
    {
      weight: 1,
      arbitrary: simple.chain((first) =>
        fc.record({
          filterType: fc.constant(first.filterType),
          operator: fc.constantFrom("AND", "OR"),
          conditions: fc.array(simple.filter((m) => m.filterType === first.filterType), { minLength: 1, maxLength: 2 }).map((rest) => [first, ...rest]),
        }),
      ),
    },
  );
}

/** Filterable columns (every kind but json). */
export function filterable(table: Table): ColumnSpec[] {
  return table.specs.filter((s) => s.kind !== "json");
}

export function filterModelArb(records: readonly TableRecord[], table: Table): fc.Arbitrary<Record<string, Record<string, unknown>>> {
  return fc
    .subarray(filterable(table), { maxLength: Math.min(3, filterable(table).length) })
    .chain((specs) => fc.tuple(...specs.map((s) => columnModel(s, records, table).map((m) => [s.id, m] as const))))
    .map((entries) => Object.fromEntries(entries));
}

export function sortModelArb(table: Table): fc.Arbitrary<OracleSortKey[]> {
  return fc.uniqueArray(fc.constantFrom(...filterable(table)), { maxLength: 3, selector: (s) => s.id }).chain((specs) =>
    fc.tuple(
      ...specs.map((s) =>
        fc.record({ colId: fc.constant(s.id), sort: fc.constantFrom<"asc" | "desc">("asc", "desc"), type: s.kind === "number" ? fc.constantFrom<"default" | "absolute">("default", "absolute") : fc.constant<"default">("default") }),
      ),
    ),
  );
}

/** The quick filter: none mostly, else one or two needles. */
export function quickArb(records: readonly TableRecord[], table: Table): fc.Arbitrary<string | undefined> {
  return fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.array(needleArb(records, table), { minLength: 1, maxLength: 2 }).map((t) => t.join(" ")) });
}


/**
 * Changes to a table's rows: per row (`perRow`, length records.length) "keep", "drop" or new
 * values of its other columns (same key), and up to `maxAdded` rows of new keys (`key` text
 * ending in `suffix`, or a number from 6000 to 9000). What the access tests make a second
 * table of.
 */
export function rowChangesArb(table: Table, records: readonly TableRecord[], options: { keepWeight: number; maxAdded: number; suffix: string }) {
  const others = table.specs.filter((s) => s.id !== table.key);
  const values = fc.tuple(...others.map(valueArb));
  const keySpec = table.specs.find((s) => s.id === table.key);
  const key: fc.Arbitrary<number | string> = keySpec?.kind === "text" ? fc.stringMatching(new RegExp(`^[0-9a-f]{6}-${options.suffix}$`)) : fc.integer({ min: 6000, max: 9000 });
  return fc.record({
    perRow: fc.array(fc.oneof({ weight: options.keepWeight, arbitrary: fc.constant<"keep">("keep") }, { weight: 1, arbitrary: fc.constant<"drop">("drop") }, { weight: 2, arbitrary: values }), { minLength: records.length, maxLength: records.length }),
    added: fc.uniqueArray(fc.record({ key, values }), { maxLength: options.maxAdded, selector: (a) => a.key }),
  });
}
