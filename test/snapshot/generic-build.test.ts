/**
 * `snapshot build` of any users table, end to end: the built snapshot holds the decided table
 * (docs/api.md "Any users table") — a UUID key, a status of other values, no email, a secret
 * column left out, a `__proto__` field, an empty table. These need the store to take any table
 * (store/input.ts `TableInput`); the store of the seed's four refuses them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSnapshotFromFile, buildSnapshotFromPostgres } from "../../src/snapshot/build-file.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { recordAt } from "../../src/store/rows-json.ts";
import { type TestPostgres, startPostgres } from "../support/postgres.ts";

const dir = mkdtempSync(join(tmpdir(), "generic-build-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every record of a built snapshot, in row order. */
function records(path: string): unknown[] {
  const { store } = loadSnapshot(path);
  return Array.from({ length: store.rowCount }, (_, row) => recordAt(store, row));
}

describe("snapshot build of any users table", () => {
  test("a UUID-keyed CSV with statuses active/invited/suspended/deleted, no email, password_hash left out", async () => {
    const statuses = ["active", "invited", "suspended", "deleted"];
    const rows = Array.from({ length: 40 }, (_, i) => ({
      id: `${(40 - i).toString(16).padStart(8, "0")}-9c0b-4ef8-bb6d-6bb9bd380a11`,
      name: `User ${i}`,
      status: statuses[i % 4],
      password_hash: `$2b$10$${i}`,
    }));
    const input = join(dir, "users.csv");
    writeFileSync(input, `id,name,status,password_hash\n${rows.map((r) => `${r.id},${r.name},${r.status},${r.password_hash}`).join("\n")}\n`);
    const output = join(dir, "users.snap");
    const report = await buildSnapshotFromFile(input, output, undefined, { exclude: ["password_hash"] });
    expect({ rows: report.rows, key: report.key, excluded: report.excluded, warnings: report.warnings }).toEqual({ rows: 40, key: "id", excluded: ["password_hash"], warnings: [] });
    const { store } = loadSnapshot(output);
    expect(store.schema.columns).toEqual([
      { id: "id", kind: "text" },
      { id: "name", kind: "text" },
      { id: "status", kind: "enum", values: ["active", "deleted", "invited", "suspended"], inferred: true },
    ]);
    // rows in key order: a text key orders by code point
    const expected = rows.map(({ password_hash: _, ...r }) => r).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(records(output)).toEqual(expected);
  });

  test("a table with a __proto__ field and no name", async () => {
    const input = join(dir, "proto.ndjson");
    writeFileSync(input, '{"id":2,"__proto__":"b","constructor":1}\n{"id":1,"__proto__":"a","constructor":2}\n');
    const output = join(dir, "proto.snap");
    await buildSnapshotFromFile(input, output);
    const got = records(output) as Record<string, unknown>[];
    expect(got.map((r) => [r.id, Object.getOwnPropertyDescriptor(r, "__proto__")?.value, r.constructor])).toEqual([
      [1, "a", 2],
      [2, "b", 1],
    ]);
  });

  test("an empty table with --allow-empty: no rows, the header's columns", async () => {
    const input = join(dir, "empty.csv");
    writeFileSync(input, "user_id,name,status\n");
    const output = join(dir, "empty.snap");
    const report = await buildSnapshotFromFile(input, output, undefined, { key: "user_id", allowEmpty: true });
    expect(report.rows).toBe(0);
    const { store } = loadSnapshot(output);
    expect({ rows: store.rowCount, columns: store.schema.columns }).toEqual({
      rows: 0,
      columns: [
        { id: "user_id", kind: "text" },
        { id: "name", kind: "text" },
        { id: "status", kind: "text" },
      ],
    });
  });
});

describe("snapshot build --from postgres of Supabase's auth.users shape", () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = startPostgres();
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    await sql.unsafe(`
      CREATE TABLE auth_users (id uuid PRIMARY KEY, email varchar(255), encrypted_password varchar(255), created_at timestamptz NOT NULL, raw_user_meta_data jsonb);
      INSERT INTO auth_users VALUES
        ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'ana@x.io', '$2a$10$abc', '2024-03-01 10:00:00+00', '{"name": "Ana"}'),
        ('3f2504e0-4f89-11d3-9a0c-0305e82c3301', NULL, '$2a$10$def', '2023-12-31 23:59:59.5+00', NULL);
    `).simple();
    await sql.end();
  }, 60_000);
  afterAll(async () => {
    await pg?.stop();
  });

  test("a uuid key, the password column left out, every request kind's data in the snapshot", async () => {
    const output = join(dir, "auth.snap");
    const report = await buildSnapshotFromPostgres({ url: pg.url, table: "auth_users" }, output, undefined, { exclude: ["encrypted_password"] });
    expect({ rows: report.rows, key: report.key, excluded: report.excluded }).toEqual({ rows: 2, key: "id", excluded: ["encrypted_password"] });
    expect(records(output)).toEqual([
      { id: "3f2504e0-4f89-11d3-9a0c-0305e82c3301", email: null, created_at: "2023-12-31T23:59:59.500Z", raw_user_meta_data: null },
      { id: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", email: "ana@x.io", created_at: "2024-03-01T10:00:00.000Z", raw_user_meta_data: { name: "Ana" } },
    ]);
  });
});
