/**
 * The bridge from a table (store/input.ts `TableInput`) to the store build of the seed's four
 * columns (store/from-table.ts `legacyInputOf`): what it takes and what it refuses.
 */
import { describe, expect, test } from "bun:test";
import { packStrings, unpackStrings } from "../../src/bits/byte-column.ts";
import type { ConvertedColumn } from "../../src/kinds/convert.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { legacyInputOf } from "../../src/store/from-table.ts";
import type { TableInput } from "../../src/store/input.ts";

const text = (values: (string | null)[]): ConvertedColumn => ({
  kind: "text",
  strings: packStrings(values.length, (i) => values[i] ?? ""),
  isNull: Uint8Array.from(values, (v) => (v === null ? 1 : 0)),
  nulls: values.filter((v) => v === null).length,
});
const enumOf = (values: string[], codes: number[]): ConvertedColumn => ({ kind: "enum", codes: Uint8Array.from(codes), values, nulls: codes.filter((c) => c === 0).length });
const numbers = (values: number[]): ConvertedColumn => ({ kind: "number", values: Float64Array.from(values), nulls: 0 });
const column = (spec: ColumnSpec, values: ConvertedColumn) => ({ spec, values });

/** A table of the seed's four (in another order), and an added column. */
function seedTable(status: ConvertedColumn = enumOf(["Active", "INACTIVE"], [1, 2, 1])): TableInput {
  return {
    rows: 3,
    key: "id",
    columns: [
      column({ id: "status", kind: status.kind }, status),
      column({ id: "age", kind: "number" }, numbers([30, 40, 50])),
      column({ id: "email", kind: "text" }, text(["a@x", null, "c@x"])),
      column({ id: "id", kind: "number" }, numbers([3, 1, 2])),
      column({ id: "name", kind: "enum", values: ["Ann", "Bob"] }, enumOf(["Ann", "Bob"], [1, 0, 2])),
    ],
  };
}

describe("legacyInputOf", () => {
  test("the four by name, status any case, null name or email as \"\", the others as extra in table order", () => {
    const input = legacyInputOf(seedTable());
    expect(Array.from(input.ids)).toEqual([3, 1, 2]);
    expect(unpackStrings(input.names)).toEqual(["Ann", "", "Bob"]);
    expect(unpackStrings(input.emails)).toEqual(["a@x", "", "c@x"]);
    expect(Array.from(input.statusCodes)).toEqual([0, 1, 0]);
    expect(input.extra?.map((e) => e.spec)).toEqual([{ id: "age", kind: "number" }]);
    const fromText = legacyInputOf(seedTable(text(["inactive", "Active", "active"])));
    expect(Array.from(fromText.statusCodes)).toEqual([1, 0, 0]);
  });

  test("refuses a table the seed's store cannot hold, naming the column", () => {
    const prefix = "this build holds tables with the columns id (number key), name, email (text) and status (active/inactive): ";
    const refuse = (table: TableInput, reason: string) => expect(() => legacyInputOf(table)).toThrow(prefix + reason);
    refuse({ ...seedTable(), key: "user_id" }, 'the key is "user_id", not "id"');
    refuse({ ...seedTable(), columns: seedTable().columns.filter((c) => c.spec.id !== "email") }, 'the table has no "email" column');
    refuse(seedTable(enumOf(["active", "invited"], [1, 2, 1])), 'status of row 2 is "invited", not one of active, inactive');
    refuse(seedTable(enumOf(["active"], [1, 0, 1])), "status of row 2 is null");
    refuse(seedTable(numbers([1, 2, 3])), "status is number, not an enum");
    const textKey = seedTable();
    textKey.columns[3] = column({ id: "id", kind: "text" }, text(["a", "b", "c"]));
    refuse(textKey, 'the key "id" is text, not a number');
  });
});
