/**
 * The generated users as a table (src/generate/table.ts): the seed's shape keyed by `id` — and
 * the wide columns with `wide` — with exactly the rows the generator makes, equal to the table
 * `snapshot build` reads from the written file with the same kinds.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { USER_COLUMN_SPECS as GENERATED_COLUMNS } from "../../src/generate/record.ts";
import { generatedColumns, generatedTable } from "../../src/generate/table.ts";
import { generateUsers, writeUsers } from "../../src/generate/users.ts";
import { WIDE_COLUMN_SPECS } from "../../src/generate/wide.ts";
import { readTableFromFile } from "../../src/snapshot/build-file.ts";
import { tableRecords } from "../support/table-values.ts";

const dir = mkdtempSync(join(tmpdir(), "generated-table-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("generatedTable", () => {
  test("the seed's shape: key id (number), name, email (text), status (enum active, inactive); the generator's rows", () => {
    const table = generatedTable({ count: 2000, seed: 7 });
    expect(table.key).toBe("id");
    expect(table.columns.map((c) => c.spec)).toEqual([
      { id: "id", kind: "number" },
      { id: "name", kind: "text" },
      { id: "email", kind: "text" },
      { id: "status", kind: "enum", values: ["active", "inactive"] },
    ]);
    expect(GENERATED_COLUMNS.map((c) => c.id)).toEqual(["id", "name", "email", "status"]);
    expect(tableRecords(table)).toEqual([...generateUsers({ count: 2000, seed: 7 })] as unknown as Record<string, unknown>[]);
  });

  test("wide: the seven columns after the four, with their declared kinds; the generator's rows", () => {
    const table = generatedTable({ count: 1500, seed: 3, wide: true });
    expect(table.columns.map((c) => c.spec)).toEqual([...GENERATED_COLUMNS, ...WIDE_COLUMN_SPECS]);
    expect(tableRecords(table)).toEqual([...generateUsers({ count: 1500, seed: 3, wide: true })] as unknown as Record<string, unknown>[]);
  });

  for (const format of ["ndjson", "json", "csv"] as const) {
    test(`${format}: equal to the table read from the written file with the same kinds`, async () => {
      const path = join(dir, `wide.${format}`);
      await writeUsers(path, { count: 1200, seed: 9, format, wide: true });
      const schemaFile = join(dir, "schema.json");
      writeFileSync(schemaFile, JSON.stringify({ columns: generatedColumns(true) }));
      const read = await readTableFromFile(path, { schemaFile });
      const generated = generatedTable({ count: 1200, seed: 9, wide: true });
      expect({ rows: read.table.rows, key: read.table.key, columns: read.table.columns.map((c) => c.spec) }).toEqual({ rows: generated.rows, key: generated.key, columns: generated.columns.map((c) => c.spec) });
      expect(tableRecords(read.table)).toEqual(tableRecords(generated));
    });
  }
});
