import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { RAW } from "../../src/schema/raw-column.ts";
import { addJsonValue, addTextValue, padNulls, profileRow, rawColumn, reserveString, rollBack, roomFor } from "../../src/ingest/raw-column.ts";
import { ConversionError } from "../../src/kinds/convert.ts";
import { convertColumn } from "../../src/kinds/registry.ts";
import { inferKind } from "../../src/schema/infer.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { unpackStrings } from "../../src/bits/byte-column.ts";
import { parseDate, parseDateTime } from "../../src/schema/values.ts";

/** A raw column of JSON values. */
function json(values: unknown[]) {
  const column = rawColumn("c", 2);
  for (const v of values) addJsonValue(column, v);
  return column;
}

/** A raw column of CSV fields. */
function csv(values: string[]) {
  const column = rawColumn("c", 2);
  for (const v of values) addTextValue(column, v);
  return column;
}

/** The conversion error's row and reason. */
function refused(run: () => unknown): { row: number; reason: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof ConversionError) return { row: error.row, reason: error.reason };
    throw error;
  }
  throw new Error("expected a ConversionError");
}

describe("raw columns converted to their kind", () => {
  test("numbers, dates and date-times: typed values, NaN for null", () => {
    const numbers = convertColumn(json([1, null, -2.5, undefined]), { id: "c", kind: "number" });
    expect(numbers).toMatchObject({ kind: "number", nulls: 2 });
    expect(Array.from((numbers as { values: Float64Array }).values)).toEqual([1, Number.NaN, -2.5, Number.NaN]);
    const days = convertColumn(csv(["2024-01-02", "", "1970-01-01"]), { id: "c", kind: "date" }) as { values: Float64Array };
    expect(Array.from(days.values)).toEqual([parseDate("2024-01-02"), Number.NaN, 0]);
    const times = convertColumn(json(["2024-01-02T03:04:05Z", null]), { id: "c", kind: "datetime" }) as { values: Float64Array };
    expect(Array.from(times.values)).toEqual([parseDateTime("2024-01-02T03:04:05Z"), Number.NaN]);
  });

  test("enums and booleans: codes, 0 for null", () => {
    const raw = csv(["b", "", "a", "b"]);
    const spec = { id: "c", ...inferKind(raw.profile, 40) } as ColumnSpec;
    expect(spec).toEqual({ id: "c", kind: "enum", values: ["a", "b"], inferred: true });
    expect(convertColumn(raw, spec)).toEqual({ kind: "enum", codes: Uint8Array.of(2, 0, 1, 2), values: ["a", "b"], nulls: 1 });
    expect(convertColumn(csv(["TRUE", "false", ""]), { id: "c", kind: "boolean" })).toEqual({ kind: "boolean", codes: Uint8Array.of(2, 1, 0), values: ["false", "true"], nulls: 1 });
    expect(convertColumn(json([true, null, false]), { id: "c", kind: "boolean" })).toEqual({ kind: "boolean", codes: Uint8Array.of(2, 0, 1), values: ["false", "true"], nulls: 1 });
  });

  test("text keeps strings as given and marks nulls; json keeps values, compact", () => {
    const text = convertColumn(json(["Zoë", null, ""]), { id: "c", kind: "text" }) as { strings: Parameters<typeof unpackStrings>[0]; isNull: Uint8Array; nulls: number };
    expect(unpackStrings(text.strings)).toEqual(["Zoë", "", ""]);
    expect(Array.from(text.isNull)).toEqual([0, 1, 0]);
    const fromJson = convertColumn(json([{ a: [1, 2] }, "x", 3, true, null]), { id: "c", kind: "json" }) as { texts: Parameters<typeof unpackStrings>[0] };
    expect(unpackStrings(fromJson.texts)).toEqual(['{"a":[1,2]}', '"x"', "3", "true", "null"]);
    const fromCsv = convertColumn(csv(['{ "a" : 1 }', "", "[1, 2]"]), { id: "c", kind: "json" }) as { texts: Parameters<typeof unpackStrings>[0] };
    expect(unpackStrings(fromCsv.texts)).toEqual(['{"a":1}', "null", "[1,2]"]);
  });

  test("a value that does not fit stops the conversion at its row, with the reason", () => {
    expect(refused(() => convertColumn(csv(["1", "0x10"]), { id: "c", kind: "number" }))).toEqual({ row: 1, reason: 'column "c" (number): "0x10" is not a number in JSON syntax' });
    expect(refused(() => convertColumn(json([1, "2"]), { id: "c", kind: "number" }))).toEqual({ row: 1, reason: 'column "c" (number): a string is not a JSON number' });
    expect(refused(() => convertColumn(json(["2024-02-30"]), { id: "c", kind: "date" }))).toEqual({ row: 0, reason: 'column "c" (date): "2024-02-30" is not a calendar day' });
    expect(refused(() => convertColumn(json(["a", 5]), { id: "c", kind: "text" })).reason).toContain("a number is not a string");
    expect(refused(() => convertColumn(csv(["x"]), { id: "c", kind: "enum", values: ["a"] })).reason).toBe('column "c" (enum): "x" is not one of its values ("a")');
    expect(refused(() => convertColumn(csv(["yes"]), { id: "c", kind: "boolean" })).reason).toBe('column "c" (boolean): "yes" is not true or false');
    expect(refused(() => convertColumn(csv(["{nope"]), { id: "c", kind: "json" })).reason).toBe('column "c" (json): "{nope" is not JSON');
  });
});

describe("raw columns as the readers fill them", () => {
  test("CSV: an unquoted empty field is null, a quoted one the empty text: text keeps it, other kinds refuse it", () => {
    const column = rawColumn("c", 2);
    addTextValue(column, "", false);
    addTextValue(column, "", true);
    addTextValue(column, "x", true);
    expect(Array.from(column.tags.subarray(0, 3))).toEqual([RAW.NULL, RAW.TEXT, RAW.TEXT]);
    const text = convertColumn(column, { id: "c", kind: "text" }) as { strings: Parameters<typeof unpackStrings>[0]; isNull: Uint8Array; nulls: number };
    expect({ strings: unpackStrings(text.strings), isNull: Array.from(text.isNull), nulls: text.nulls }).toEqual({ strings: ["", "", "x"], isNull: [1, 0, 0], nulls: 1 });
    const quotedEmpty = () => {
      const c = rawColumn("n", 2);
      addTextValue(c, "1");
      addTextValue(c, "", true);
      return c;
    };
    expect(refused(() => convertColumn(quotedEmpty(), { id: "n", kind: "number" }))).toEqual({ row: 1, reason: 'column "n" (number): "" is not a number in JSON syntax' });
    expect(refused(() => convertColumn(quotedEmpty(), { id: "n", kind: "boolean" }))).toEqual({ row: 0, reason: 'column "n" (boolean): "1" is not true or false' });
    expect(refused(() => convertColumn(quotedEmpty(), { id: "n", kind: "date" })).reason).toBe('column "n" (date): "1" is not a date (YYYY-MM-DD)');
    expect(refused(() => convertColumn(quotedEmpty(), { id: "n", kind: "enum", values: ["1"] }))).toEqual({ row: 1, reason: 'column "n" (enum): "" is not one of its values ("1")' });
    expect(refused(() => convertColumn(quotedEmpty(), { id: "n", kind: "json" }))).toEqual({ row: 1, reason: 'column "n" (json): "" is not JSON' });
  });

  test("values written first and profiled after (the NDJSON fast path) equal values added at once", () => {
    const values: unknown[] = ["2024-01-02", null, 5, true, "x", { a: 1 }, "2024-01-03"];
    const atOnce = json(values);
    const later = rawColumn("c", 2);
    for (const v of values) {
      const row = later.count;
      roomFor(later, row + 2);
      later.strings.offsets[row + 1] = later.strings.offsets[row];
      later.tags[row] = RAW.NULL;
      if (typeof v === "string" || (typeof v === "object" && v !== null)) {
        const text = typeof v === "string" ? v : JSON.stringify(v);
        const bytes = new TextEncoder().encode(text);
        reserveString(later, bytes.length);
        later.strings.bytes.set(bytes, later.strings.offsets[row]);
        later.tags[row] = typeof v === "string" ? RAW.STRING : RAW.OBJECT;
        later.strings.offsets[row + 1] = later.strings.offsets[row] + bytes.length;
      } else if (typeof v === "number" || typeof v === "boolean") {
        later.tags[row] = typeof v === "number" ? RAW.NUMBER : RAW.BOOLEAN;
        later.numbers[row] = Number(v);
      }
      later.count = row + 1;
      later.strings.count = row + 1;
      profileRow(later, row);
    }
    const { distinctUtf8: _a, lastDistinct: _b, ...profileLater } = later.profile;
    const { distinctUtf8: _c, lastDistinct: _d, ...profileAtOnce } = atOnce.profile;
    expect(profileLater).toEqual(profileAtOnce);
    expect(convertColumn(later, { id: "c", kind: "json" })).toEqual(convertColumn(atOnce, { id: "c", kind: "json" }));
  });

  test("padNulls fills rows with nulls in one step; rollBack undoes a begun value", () => {
    const column = rawColumn("c", 2);
    addJsonValue(column, "a");
    padNulls(column, 1000);
    expect({ count: column.count, nulls: column.profile.nulls, strings: column.strings.count }).toEqual({ count: 1000, nulls: 999, strings: 1000 });
    const row = column.count;
    roomFor(column, row + 2);
    column.tags[row] = RAW.NUMBER;
    column.strings.offsets[row + 1] = column.strings.offsets[row];
    column.count = row + 1;
    column.strings.count = row + 1;
    rollBack(column, row);
    addJsonValue(column, "b");
    const text = convertColumn(column, { id: "c", kind: "text" }) as { strings: Parameters<typeof unpackStrings>[0]; isNull: Uint8Array };
    const strings = unpackStrings(text.strings);
    expect([strings[0], strings[500], strings[1000], strings.length, text.isNull[1000]]).toEqual(["a", "", "b", 1001, 0]);
  });
});

describe("enum conversion", () => {
  test("any sequence of values, of a few values or of many, gets each value's code", () => {
    const few = ["active", "inactive", "invited"];
    const many = Array.from({ length: 40 }, (_, i) => `v${i % 7}${"é".repeat(i % 3)}${i}`);
    for (const values of [few, many]) {
      fc.assert(
        fc.property(fc.array(fc.option(fc.constantFrom(...values), { nil: null }), { maxLength: 60 }), fc.boolean(), (rows, asCsv) => {
          const column = rawColumn("c", 2);
          for (const v of rows) {
            if (asCsv) addTextValue(column, v ?? "");
            else addJsonValue(column, v);
          }
          const converted = convertColumn(column, { id: "c", kind: "enum", values }) as { codes: Uint8Array; nulls: number };
          expect(Array.from(converted.codes)).toEqual(rows.map((v) => (v === null ? 0 : values.indexOf(v) + 1)));
          expect(converted.nulls).toBe(rows.filter((v) => v === null).length);
        }),
        { numRuns: 200 },
      );
    }
  });
});
