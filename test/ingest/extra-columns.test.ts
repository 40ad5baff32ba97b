/**
 * No field is dropped (docs/api.md "Any users table"): CSV, NDJSON and JSON-array
 * inputs with added columns round-trip through `snapshot build` with every field in its kind's
 * output format; kinds come from `--schema` or are inferred; a value that does not fit stops the
 * build with `file:line: reason` and leaves the previous snapshot untouched.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IngestError } from "../../src/ingest/read.ts";
import { SchemaError } from "../../src/schema/kinds.ts";
import { buildSnapshotFromFile } from "../../src/snapshot/build-file.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { rowsToJson } from "../../src/store/rows-json.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "extra-columns-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Builds `name` (written with `text`) and returns the served schema and records, in id order. */
async function build(name: string, text: string, schema?: object) {
  const input = join(dir, name);
  writeFileSync(input, text);
  let schemaFile: string | undefined;
  if (schema !== undefined) {
    schemaFile = join(dir, `${name}.schema.json`);
    writeFileSync(schemaFile, JSON.stringify(schema));
  }
  const output = join(dir, `${name}.snap`);
  await buildSnapshotFromFile(input, output, undefined, { schemaFile });
  const { store } = loadSnapshot(output);
  const rows = Uint32Array.from({ length: store.rowCount }, (_, i) => i);
  return { columns: store.schema.columns, records: JSON.parse(new TextDecoder().decode(rowsToJson(store, rows))) as Record<string, unknown>[] };
}

/** The `file:line: reason` a build of `text` stops with. */
async function refusal(name: string, text: string, schema?: object): Promise<string> {
  try {
    await build(name, text, schema);
  } catch (error) {
    if (error instanceof IngestError || error instanceof SchemaError) return error.message.replace(`${dir}/`, "");
    throw error;
  }
  throw new Error("the build was not refused");
}

const CSV = `id,name,email,status,created_at,birthday,role,age,verified,notes,prefs
3,Cy,cy@x,active,2024-03-01 10:00:00+02:00,2001-12-31,admin,19,TRUE,"multi
line",{}
1,Ana,ana@x,inactive,2024-03-01T10:00:00Z,,member,34.5,false,,"{""a"":[1,2]}"
2,Bob,bob@x,active,,1990-05-01,,-7,,hello,
`;

describe("every field kept", () => {
  test("CSV: kinds inferred from the values, every field back in its kind's format", async () => {
    const { columns, records } = await build("w.csv", CSV);
    expect(columns.slice(4)).toEqual([
      { id: "created_at", kind: "datetime" },
      { id: "birthday", kind: "date" },
      { id: "role", kind: "text" }, // 2 distinct values in 3 rows: more than one per 10 rows
      { id: "age", kind: "number" },
      { id: "verified", kind: "boolean" },
      { id: "notes", kind: "text" },
      { id: "prefs", kind: "json" },
    ]);
    expect(records).toEqual([
      { id: 1, name: "Ana", email: "ana@x", status: "inactive", created_at: "2024-03-01T10:00:00.000Z", birthday: null, role: "member", age: 34.5, verified: false, notes: null, prefs: { a: [1, 2] } },
      { id: 2, name: "Bob", email: "bob@x", status: "active", created_at: null, birthday: "1990-05-01", role: null, age: -7, verified: null, notes: "hello", prefs: null },
      { id: 3, name: "Cy", email: "cy@x", status: "active", created_at: "2024-03-01T08:00:00.000Z", birthday: "2001-12-31", role: "admin", age: 19, verified: true, notes: "multi\nline", prefs: {} },
    ]);
  });

  test("NDJSON: a field first seen late is null before it; a missing field is null; --schema declares kinds", async () => {
    const lines = [
      { id: 1, name: "A", email: "a@x", status: "active", tier: "gold" },
      { id: 2, name: "B", email: "b@x", status: "active", tier: "silver", last_login: "2024-01-02T03:04:05.006Z" },
      { id: 3, name: "C", email: "c@x", status: "inactive", tags: ["x"], tier: null },
    ];
    const text = `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
    const inferred = await build("late.ndjson", text);
    expect(inferred.columns.slice(4)).toEqual([
      { id: "tier", kind: "text" },
      { id: "last_login", kind: "datetime" },
      { id: "tags", kind: "json" },
    ]);
    expect(inferred.records.map((r) => [r.tier, r.last_login, r.tags])).toEqual([
      ["gold", null, null],
      ["silver", "2024-01-02T03:04:05.006Z", null],
      [null, null, ["x"]],
    ]);
    const declared = await build("late2.ndjson", text, { columns: [{ id: "tier", kind: "enum", values: ["silver", "gold"] }] });
    expect(declared.columns.slice(4)).toEqual([
      { id: "tier", kind: "enum", values: ["silver", "gold"] },
      { id: "last_login", kind: "datetime" },
      { id: "tags", kind: "json" },
    ]);
    // a schema column the input lacks (a typo, say) is an error, not an all-null column
    expect(await refusal("late3.ndjson", text, { columns: [{ id: "score", kind: "number" }] })).toBe('schema: "score" is not a field of the input; fields: id, name, email, status, tier, last_login, tags');
  });

  test("a JSON array and the same NDJSON give the same snapshot records", async () => {
    const rows = Array.from({ length: 40 }, (_, i) => ({ id: i, name: `n${i}`, email: `e${i}@x`, status: i % 2 ? "active" : "inactive", plan: ["free", "pro"][i % 2], n: i * 1.5, on: i % 3 === 0 }));
    const a = await build("arr.json", JSON.stringify(rows));
    const b = await build("arr.ndjson", rows.map((r) => JSON.stringify(r)).join("\n"));
    expect(a.records).toEqual(b.records);
    expect(a.records).toEqual(rows);
    expect(a.columns.slice(4)).toEqual([{ id: "plan", kind: "enum", values: ["free", "pro"], inferred: true }, { id: "n", kind: "number" }, { id: "on", kind: "boolean" }]);
  });
});

describe("bad values stop the build with file:line: reason", () => {
  const head = "id,name,email,status,age\n";
  test("numbers: JSON grammar in CSV, nothing beyond ±2^53", async () => {
    expect(await refusal("hex.csv", `${head}1,a,a@x,active,0x10\n`, { columns: [{ id: "age", kind: "number" }] })).toBe('hex.csv:2: column "age" (number): "0x10" is not a number in JSON syntax');
    expect(await refusal("sp.csv", `${head}1,a,a@x,active,3\n2,b,b@x,active, 5\n`, { columns: [{ id: "age", kind: "number" }] })).toBe('sp.csv:3: column "age" (number): " 5" is not a number in JSON syntax');
    expect(await refusal("big.csv", `${head}1,a,a@x,active,9007199254740993\n`, { columns: [{ id: "age", kind: "number" }] })).toBe('big.csv:2: column "age" (number): "9007199254740993" is beyond ±2^53 and would be rounded');
    expect(await refusal("big.ndjson", '{"id":1,"name":"a","email":"a@x","status":"active","age":9007199254740993}\n')).toBe('big.ndjson:1: field "age": 9007199254740993 is beyond ±2^53 and would be rounded');
  });

  test("dates, date-times, enums, and a string in a number column", async () => {
    const csv = (v: string) => `id,name,email,status,d\n1,a,a@x,active,${v}\n`;
    expect(await refusal("d.csv", csv("2024-02-30"), { columns: [{ id: "d", kind: "date" }] })).toContain('d.csv:2: column "d" (date): "2024-02-30"');
    expect(await refusal("dt.csv", csv("2024-03-01T10:00:00+2"), { columns: [{ id: "d", kind: "datetime" }] })).toContain('dt.csv:2: column "d" (datetime): "2024-03-01T10:00:00+2" is not an ISO 8601 date-time');
    expect(await refusal("e.csv", csv("boss"), { columns: [{ id: "d", kind: "enum", values: ["a", "b"] }] })).toBe('e.csv:2: column "d" (enum): "boss" is not one of its values ("a", "b")');
    const mixed = '{"id":1,"name":"a","email":"a@x","status":"active","age":3}\n{"id":2,"name":"b","email":"b@x","status":"active","age":"4"}\n';
    expect(await refusal("mixed.ndjson", mixed, { columns: [{ id: "age", kind: "number" }] })).toBe('mixed.ndjson:2: column "age" (number): a string is not a JSON number');
  });

  test("a field name that is not a column id, and a bad schema file", async () => {
    expect(await refusal("id.ndjson", '{"id":1,"name":"a","email":"a@x","status":"active","first name":"x"}\n')).toBe('id.ndjson:1: field "first name" is not a valid column id ([A-Za-z_][A-Za-z0-9_]{0,63}); rename it in the input, or leave it out with --exclude');
    expect(await refusal("id.csv", "id,name,email,status,9lives\n1,a,a@x,active,x\n")).toBe('id.csv:1: field "9lives" is not a valid column id ([A-Za-z_][A-Za-z0-9_]{0,63}); rename it in the input, or leave it out with --exclude');
    const bad = await refusal("s.csv", "id,name,email,status\n1,a,a@x,active\n", { columns: [{ id: "x", kind: "money" }] });
    expect(bad).toContain('columns[0]: column "x" has kind "money"; kinds are number, text, enum, date, datetime, boolean, json');
  });

  test("a refused build leaves the previous snapshot untouched", async () => {
    const input = join(dir, "keep.csv");
    const output = join(dir, "keep.snap");
    writeFileSync(input, "id,name,email,status,age\n1,a,a@x,active,3\n");
    await buildSnapshotFromFile(input, output);
    const before = readFileSync(output);
    writeFileSync(input, "id,name,email,status,age\n1,a,a@x,active,3\n2,b,b@x,active,x\n");
    await expect(buildSnapshotFromFile(input, output, undefined, { schemaFile: undefined })).resolves.toBeDefined(); // "x" with 3: a text column
    writeFileSync(input, "id,name,email,status,age\n1,a,a@x,active,3\n2,b,b@x,active,x\n");
    const schemaFile = join(dir, "keep.schema.json");
    writeFileSync(schemaFile, JSON.stringify({ columns: [{ id: "age", kind: "number" }] }));
    const after = readFileSync(output);
    await expect(buildSnapshotFromFile(input, output, undefined, { schemaFile })).rejects.toThrow('keep.csv:3: column "age" (number): "x" is not a number in JSON syntax');
    expect(Buffer.compare(readFileSync(output), after)).toBe(0);
    expect(before.length).toBeGreaterThan(0);
  });
});
