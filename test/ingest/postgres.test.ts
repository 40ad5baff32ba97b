/**
 * Tables from PostgreSQL (`snapshot build --from … --table | --query`) against a real server
 * started in a temporary directory (test/support/postgres.ts): any table — a uuid key (the shape
 * of Supabase's auth.users), an enum status of its own, no special column — every supported type
 * mapped to its kind (an enum in its declared order), every value kept exactly (escapes, raw
 * newlines and tabs inside json text), more rows than one progress step, a query with a cast;
 * columns left out never selected (a role without the privilege to read them can build); an
 * empty table with its columns from the types; and the refusals — a type no kind holds, a
 * duplicate key, a value that would be rounded, a key of another kind — each naming the row,
 * with the old snapshot untouched.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { PassThrough, type Readable } from "node:stream";
import { readAhead, readCopyText } from "../../src/ingest/postgres.ts";
import { buildSnapshotFromPostgres, readTableFromPostgres } from "../../src/snapshot/build-file.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { recordAt } from "../../src/store/rows-json.ts";
import { type TestPostgres, startPostgres } from "../support/postgres.ts";
import { tableRecords } from "../support/table-values.ts";

/**
 * Resolves once `stream` has handed on what is written next (its next "data" event) or is paused
 * (what is written then waits in it): the turn a write takes to reach the stream's reader.
 */
function delivered(stream: Readable): Promise<void> {
  if (stream.isPaused()) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off("data", done);
      stream.off("pause", done);
      resolve();
    };
    stream.on("data", done);
    stream.on("pause", done);
  });
}

let pg: TestPostgres;
let sql: ReturnType<typeof postgres>;
let dir: string;

beforeAll(async () => {
  pg = startPostgres();
  sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  dir = mkdtempSync(join(tmpdir(), "users-pg-snap-"));
  await sql.unsafe(`
    CREATE TYPE role AS ENUM ('owner', 'admin', 'member');
    CREATE TABLE users (
      id bigint PRIMARY KEY, name text NOT NULL, email varchar(200) NOT NULL, status text NOT NULL,
      role role, age numeric, score double precision, small smallint, created_at timestamptz,
      seen_at timestamp, birthday date, verified boolean, prefs jsonb, raw json, uid uuid, code char(3)
    );
    INSERT INTO users VALUES
      (3, 'Émile', 'emile@x.fr', 'active', 'member', 34.5, 1.25, 7, '2024-03-01 10:30:00.123+02', '2024-03-01 10:30:00', '1990-05-01', true,
        '{"theme": "dark", "n": [1, 2]}', '[1, "x"]', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'abc'),
      (1, 'Ана', 'ana@x.ru', 'INACTIVE', 'owner', -2, -0.5, -1, '1969-12-31 23:59:59.999+00', '2000-02-29 12:00:00.5', '1969-12-31', false,
        'null', '{}', NULL, 'x  '),
      (2, 'Bob', 'bob@x.com', 'active', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    CREATE TABLE many AS SELECT g::bigint AS id, 'user ' || g AS name, 'u' || g || '@x' AS email,
      CASE WHEN g % 3 = 0 THEN 'inactive' ELSE 'active' END AS status, g % 7 AS bucket FROM generate_series(1, 25000) AS g;
    CREATE TABLE odd (id int, name text, email text, status text, addr inet);
    INSERT INTO odd VALUES (1, 'a', 'a@x', 'active', '10.0.0.1');
    CREATE TABLE dups (id int, name text, email text, status text);
    INSERT INTO dups VALUES (1, 'a', 'a@x', 'active'), (2, 'b', 'b@x', 'active'), (1, 'c', 'c@x', 'active');
    CREATE TABLE fine (id int, name text, email text, status text, at timestamptz);
    INSERT INTO fine VALUES (1, 'a', 'a@x', 'active', '2024-01-01 00:00:00+00'), (2, 'b', 'b@x', 'active', '2024-01-01 00:00:00.000123+00');
    CREATE TABLE escapes (id int, name text, email text, status text, note text, doc json, tags jsonb);
    CREATE TABLE late AS SELECT g AS id, 'n' || g AS name, 'e' || g AS email, CASE WHEN g = 20000 THEN 'weird' ELSE 'active' END AS status
      FROM generate_series(1, 60000) AS g;
    CREATE TABLE nostatus (id int, name text, email text);
    INSERT INTO nostatus VALUES (1, 'a', 'a@x');
    CREATE TYPE user_status AS ENUM ('active', 'invited', 'suspended', 'deleted');
    CREATE TABLE auth_users (
      id uuid PRIMARY KEY, email varchar(255), encrypted_password varchar(255), status user_status NOT NULL,
      created_at timestamptz NOT NULL, raw_user_meta_data jsonb, is_super_admin boolean
    );
    INSERT INTO auth_users VALUES
      ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'ana@x.io', '$2a$10$abc', 'invited', '2024-03-01 10:00:00+00', '{"name": "Ana"}', false),
      ('3f2504e0-4f89-11d3-9a0c-0305e82c3301', NULL, '$2a$10$def', 'deleted', '2023-12-31 23:59:59.5+00', NULL, NULL),
      ('00000000-0000-4000-8000-000000000001', 'cy@x.io', NULL, 'active', '2024-01-01 00:00:00+00', '{}', true);
    CREATE TABLE empty_users (user_id uuid, score numeric, status user_status, joined date);
    CREATE TABLE uuid_dups (id uuid, n int);
    INSERT INTO uuid_dups VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1), ('3f2504e0-4f89-11d3-9a0c-0305e82c3301', 2), ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 3);
    CREATE TABLE keyed_by_status (status user_status, n int);
    INSERT INTO keyed_by_status VALUES ('active', 1);
    CREATE TABLE big (id int, n numeric);
    INSERT INTO big VALUES (1, 9007199254740992), (2, 9007199254740993);
    CREATE ROLE reader LOGIN;
    GRANT SELECT (id, email, status, created_at, raw_user_meta_data, is_super_admin) ON auth_users TO reader;
    GRANT USAGE ON TYPE user_status TO reader;
  `).simple();
}, 60_000);

afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("snapshot build --from postgres", () => {
  test("a table: every type to its kind, the enum in its declared order, every value as the server holds it", async () => {
    const out = join(dir, "users.snap");
    const report = await buildSnapshotFromPostgres({ url: pg.url, table: "public.users" }, out);
    expect(report.rows).toBe(3);
    const { store } = loadSnapshot(out);
    expect(store.schema.columns).toEqual([
      { id: "id", kind: "number" },
      { id: "name", kind: "text" },
      { id: "email", kind: "text" },
      // an ordinary text column: no column but the key is special, and 3 rows are too few for an enum
      { id: "status", kind: "text" },
      { id: "role", kind: "enum", values: ["owner", "admin", "member"] },
      { id: "age", kind: "number" },
      { id: "score", kind: "number" },
      { id: "small", kind: "number" },
      { id: "created_at", kind: "datetime" },
      { id: "seen_at", kind: "datetime" },
      { id: "birthday", kind: "date" },
      { id: "verified", kind: "boolean" },
      { id: "prefs", kind: "json" },
      { id: "raw", kind: "json" },
      { id: "uid", kind: "text" },
      { id: "code", kind: "text" },
    ]);
    expect([0, 1, 2].map((row) => recordAt(store, row) as unknown)).toEqual([
      {
        id: 1, name: "Ана", email: "ana@x.ru", status: "INACTIVE", role: "owner", age: -2, score: -0.5, small: -1,
        created_at: "1969-12-31T23:59:59.999Z", seen_at: "2000-02-29T12:00:00.500Z", birthday: "1969-12-31", verified: false,
        prefs: null, raw: {}, uid: null, code: "x  ",
      },
      { id: 2, name: "Bob", email: "bob@x.com", status: "active", role: null, age: null, score: null, small: null, created_at: null, seen_at: null, birthday: null, verified: null, prefs: null, raw: null, uid: null, code: null },
      {
        id: 3, name: "Émile", email: "emile@x.fr", status: "active", role: "member", age: 34.5, score: 1.25, small: 7,
        created_at: "2024-03-01T08:30:00.123Z", seen_at: "2024-03-01T10:30:00.000Z", birthday: "1990-05-01", verified: true,
        prefs: { theme: "dark", n: [1, 2] }, raw: [1, "x"], uid: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", code: "abc",
      },
    ]);
    // the enum's order is the declared one: owner < admin < member
    const role = store.columns.get("role")!;
    const ids = store.columns.get("id")!.distinct!;
    expect(Array.from(role.rowsByValue as Uint32Array).map((row) => ids[row])).toEqual([2, 1, 3]);
  });

  test("more rows than one progress step, through a query with a cast; a --schema file overrides a type's kind", async () => {
    const out = join(dir, "many.snap");
    const schemaFile = join(dir, "schema.json");
    writeFileSync(schemaFile, JSON.stringify({ columns: [{ id: "bucket", kind: "json" }] }));
    const progress: number[] = [];
    const report = await buildSnapshotFromPostgres(
      { url: pg.url, query: "SELECT id, name, email, status, bucket FROM many WHERE id <= 24000" },
      out,
      (p) => {
        if (p.phase === "read" && p.done !== undefined) progress.push(p.done);
      },
      { schemaFile },
    );
    expect(report.rows).toBe(24_000);
    expect(progress.at(-1)).toBe(24_000);
    expect(progress.length).toBeGreaterThan(2);
    const { store } = loadSnapshot(out);
    expect(store.schema.columns.at(-1)).toEqual({ id: "bucket", kind: "json" });
    expect(recordAt(store, 23_999) as unknown).toEqual({ id: 24_000, name: "user 24000", email: "u24000@x", status: "inactive", bucket: 24_000 % 7 });
    const cast = await buildSnapshotFromPostgres({ url: pg.url, query: "SELECT id, name, email, status, addr::text AS addr FROM odd" }, join(dir, "odd.snap"));
    expect(cast.rows).toBe(1);
  });

  test("values with escapes, backslashes, raw newlines and tabs (inside json text) arrive exactly", async () => {
    // JSON text as the server keeps it for `json`: raw newlines and tabs between tokens, escapes
    const doc = '{\n\t"a" :\t"x\\ny",\n "b": "\\u00e9\\\\"\n}';
    await sql`INSERT INTO escapes VALUES (1, ${'back\\slash "quoted"'}, ${"tab\there"}, 'active', ${"line one\nline two\r\n\\N"}, ${doc}::text::json, ${'{"k": "v\\tw", "e": "😀"}'}::text::jsonb)`;
    await sql`INSERT INTO escapes VALUES (2, ${"\\N"}, ${"\\."}, 'inactive', NULL, ${"  [ 1 ,\n2 ]  "}::text::json, 'null'::jsonb)`;
    const out = join(dir, "escapes.snap");
    await buildSnapshotFromPostgres({ url: pg.url, table: "escapes" }, out);
    const { store } = loadSnapshot(out);
    expect([0, 1].map((row) => recordAt(store, row) as unknown)).toEqual([
      { id: 1, name: 'back\\slash "quoted"', email: "tab\there", status: "active", note: "line one\nline two\r\n\\N", doc: { a: "x\ny", b: "é\\" }, tags: { k: "v\tw", e: "😀" } },
      { id: 2, name: "\\N", email: "\\.", status: "inactive", note: null, doc: [1, 2], tags: null },
    ]);
  });

  test("reads at an exported snapshot (a transaction) end, however the COPY's last chunks arrive: 60 reads of a 70 kB table", async () => {
    // 22 rows of 3.2 kB: more than the COPY stream's 16 KiB buffer in one socket read, often
    // together with the COPY's end (the driver's socket was left paused: the COMMIT never read)
    await sql.unsafe("CREATE TABLE wide_rows (id bigint PRIMARY KEY, big text); INSERT INTO wide_rows SELECT g, repeat(md5(g::text), 100) FROM generate_series(1, 22) AS g");
    const holder = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      for (let i = 0; i < 60; i++) {
        await holder.begin("isolation level repeatable read", async (tx) => {
          const [{ name }] = await tx<{ name: string }[]>`SELECT pg_export_snapshot() AS name`;
          const decision = await readTableFromPostgres({ url: pg.url, table: "wide_rows", snapshot: name });
          expect(decision.table.rows).toBe(22);
        });
      }
    } finally {
      await holder.end();
    }
  }, 240_000);

  test("the read-ahead: every byte in order, the stream paused past the bound and resumed once taken, its error thrown", async () => {
    const stream = new PassThrough();
    const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(100, i));
    const pausedAt: number[] = [];
    const reader = readAhead(stream, 250);
    // the first take starts the reading (a generator runs when first asked) and gets chunk 0;
    // nothing more is taken while the other 39 chunks of 100 bytes are written: the stream
    // pauses past 250 bytes queued
    const first = reader.next();
    for (const [i, chunk] of chunks.entries()) {
      const handed = delivered(stream);
      stream.write(chunk);
      await handed;
      if (stream.isPaused()) pausedAt.push(i);
    }
    stream.end();
    expect(pausedAt.length).toBeGreaterThan(0);
    const got: Buffer[] = [Buffer.from((await first).value as Uint8Array)];
    // taking what is queued resumes the stream: else this loop would wait for ever
    for await (const part of reader) got.push(Buffer.from(part));
    expect(Buffer.concat(got).equals(Buffer.concat(chunks))).toBe(true);
    // parts are handed over joined: fewer than the chunks written
    expect(got.length).toBeLessThan(chunks.length);

    const failing = new PassThrough();
    const failed = (async () => {
      const seen: number[] = [];
      for await (const part of readAhead(failing)) seen.push(part.length);
      return seen;
    })();
    const handed = delivered(failing);
    failing.write(Buffer.alloc(10));
    await handed;
    failing.destroy(new Error("connection lost"));
    await expect(failed).rejects.toThrow("connection lost");
  });

  test("the binary COPY reader: tuples split across chunks at every byte; a malformed stream is refused", async () => {
    const tuple = (text: string) => {
      const bytes = Buffer.from(text, "utf8");
      const head = Buffer.alloc(6);
      head.writeInt16BE(1, 0);
      head.writeInt32BE(bytes.length, 2);
      return Buffer.concat([head, bytes]);
    };
    const header = Buffer.concat([Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"), Buffer.from([0, 0, 0, 0, 0, 0, 0, 2, 9, 9])]);
    const trailer = Buffer.from([0xff, 0xff]);
    const texts = ['{"a":1}', '{"b":"é😀\\n"}', "", '{"c":\n\t2}'];
    const stream = Buffer.concat([header, ...texts.map(tuple), trailer]);
    const read = async (chunks: Uint8Array[]) => {
      const seen: string[] = [];
      await readCopyText(
        (async function* () {
          yield* chunks;
        })(),
        (text, count) => {
          const parts = text.split("\0");
          expect(parts.length).toBe(count);
          seen.push(...parts);
        },
      );
      return seen;
    };
    for (let cut = 0; cut <= stream.length; cut++) expect(await read([stream.subarray(0, cut), stream.subarray(cut)])).toEqual(texts);
    expect(await read([...stream].map((b) => Uint8Array.of(b)))).toEqual(texts);
    const refusal = async (chunks: Uint8Array[]) => {
      try {
        await read(chunks);
      } catch (error) {
        return (error as Error).message;
      }
      return "read";
    };
    expect(await refusal([stream.subarray(0, stream.length - 1)])).toBe("the COPY stream ended early");
    expect(await refusal([Buffer.concat([stream, Buffer.from([0])])])).toBe("bytes after the COPY trailer");
    expect(await refusal([Buffer.concat([Buffer.from("PGCOPY\n\xff\r\n\x01", "latin1"), stream.subarray(11)])])).toBe("the COPY stream does not start with the binary signature");
    const nullField = Buffer.from([0, 1, 0xff, 0xff, 0xff, 0xff]);
    expect(await refusal([Buffer.concat([header, nullField, trailer])])).toBe("a NULL row in the COPY stream");
    const twoFields = Buffer.from([0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(await refusal([Buffer.concat([header, twoFields, trailer])])).toBe("a COPY tuple of 2 fields (1 expected)");
    expect(await refusal([Buffer.concat([header, tuple("ok"), Buffer.from([0, 1, 0, 0, 0, 1, 0xc3]), trailer])])).toBe(
      "invalid UTF-8 in a row of the COPY stream (is the database's encoding SQL_ASCII?)",
    );
  });

  test("refusals name the row; a failed build leaves the previous snapshot untouched", async () => {
    const out = join(dir, "keep.snap");
    await buildSnapshotFromPostgres({ url: pg.url, table: "users" }, out);
    const before = readFileSync(out);
    const refused = async (source: { table?: string; query?: string }) => {
      try {
        await buildSnapshotFromPostgres({ url: pg.url, ...source }, out);
      } catch (error) {
        return (error as Error).message;
      }
      return "built";
    };
    expect(await refused({ table: "dups" })).toBe("postgres:dups:3: duplicate key 1 (first seen on line 1)");
    expect(await refused({ query: "SELECT * FROM fine ORDER BY id" })).toMatch(/^postgres:query:\d+: .*at.*fraction of a millisecond/);
    expect(await refused({ table: "odd" })).toBe('postgres:odd:1: column "addr" has type inet, which no column kind holds; cast it in --query (to text, say), or leave it out with --exclude');
    expect(await refused({ table: "missing_table" })).toBe('postgres:missing_table:1: PostgreSQL: relation "missing_table" does not exist');
    expect(await refused({ query: "SELECT * FROM many WHERE false" })).toBe("postgres:query:1: no records (an empty table is built only with --allow-empty)");
    expect(Buffer.compare(readFileSync(out), before)).toBe(0);
  });

  test("any table: a uuid key (Supabase's auth.users), an enum status, no special column, every type its kind", async () => {
    const decision = await readTableFromPostgres({ url: pg.url, table: "auth_users" });
    expect(decision.table.key).toBe("id");
    expect(decision.table.columns.map((c) => c.spec)).toEqual([
      { id: "id", kind: "text" },
      { id: "email", kind: "text" },
      { id: "encrypted_password", kind: "text" },
      { id: "status", kind: "enum", values: ["active", "invited", "suspended", "deleted"] },
      { id: "created_at", kind: "datetime" },
      { id: "raw_user_meta_data", kind: "json" },
      { id: "is_super_admin", kind: "boolean" },
    ]);
    expect(decision.warnings).toEqual(['column "encrypted_password" looks like a secret (it holds "password") and will be served to every client; leave it out with --exclude encrypted_password']);
    expect(tableRecords(decision.table)).toEqual([
      { id: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", email: "ana@x.io", encrypted_password: "$2a$10$abc", status: "invited", created_at: "2024-03-01T10:00:00.000Z", raw_user_meta_data: { name: "Ana" }, is_super_admin: false },
      { id: "3f2504e0-4f89-11d3-9a0c-0305e82c3301", email: null, encrypted_password: "$2a$10$def", status: "deleted", created_at: "2023-12-31T23:59:59.500Z", raw_user_meta_data: null, is_super_admin: null },
      { id: "00000000-0000-4000-8000-000000000001", email: "cy@x.io", encrypted_password: null, status: "active", created_at: "2024-01-01T00:00:00.000Z", raw_user_meta_data: {}, is_super_admin: true },
    ]);
    // a status the seed's store would refuse, and no status at all, read as any column
    expect(tableRecords((await readTableFromPostgres({ url: pg.url, query: "SELECT * FROM late WHERE id IN (1, 20000) ORDER BY id" })).table)).toEqual([
      { id: 1, name: "n1", email: "e1", status: "active" },
      { id: 20000, name: "n20000", email: "e20000", status: "weird" },
    ]);
    expect((await readTableFromPostgres({ url: pg.url, table: "nostatus" })).table.columns.map((c) => c.spec.id)).toEqual(["id", "name", "email"]);
  });

  test("--exclude: the columns are not selected at all, so a role that may not read them can build; a name not in the table is refused", async () => {
    const asReader = pg.url.replace("//app@", "//reader@");
    const decision = await readTableFromPostgres({ url: asReader, table: "auth_users" }, { exclude: ["encrypted_password"] });
    expect(decision.excluded).toEqual(["encrypted_password"]);
    expect(decision.warnings).toEqual([]);
    expect(decision.table.columns.map((c) => c.spec.id)).toEqual(["id", "email", "status", "created_at", "raw_user_meta_data", "is_super_admin"]);
    expect(tableRecords(decision.table)[1]).toEqual({ id: "3f2504e0-4f89-11d3-9a0c-0305e82c3301", email: null, status: "deleted", created_at: "2023-12-31T23:59:59.500Z", raw_user_meta_data: null, is_super_admin: null });
    // selecting it would fail: the role may not read it
    await expect(readTableFromPostgres({ url: asReader, table: "auth_users" })).rejects.toThrow("postgres:auth_users:1: PostgreSQL: permission denied for table auth_users");
    await expect(readTableFromPostgres({ url: pg.url, table: "auth_users" }, { exclude: ["encrypted_pasword"] })).rejects.toThrow(
      'postgres:auth_users:1: --exclude "encrypted_pasword" is not a field of the input; fields: id, email, encrypted_password, status, created_at, raw_user_meta_data, is_super_admin',
    );
    const query = await readTableFromPostgres({ url: pg.url, query: "SELECT id, encrypted_password, status FROM auth_users" }, { exclude: ["encrypted_password"] });
    expect(query.table.columns.map((c) => c.spec.id)).toEqual(["id", "status"]);
  });

  test("an empty table: refused, or with allowEmpty a table of no rows whose columns come from the types", async () => {
    await expect(readTableFromPostgres({ url: pg.url, table: "empty_users" }, { key: "user_id" })).rejects.toThrow("postgres:empty_users:1: no records (an empty table is built only with --allow-empty)");
    const empty = await readTableFromPostgres({ url: pg.url, table: "empty_users" }, { key: "user_id", allowEmpty: true });
    expect({ rows: empty.table.rows, key: empty.table.key, columns: empty.table.columns.map((c) => c.spec) }).toEqual({
      rows: 0,
      key: "user_id",
      columns: [
        { id: "user_id", kind: "text" },
        { id: "score", kind: "number" },
        { id: "status", kind: "enum", values: ["active", "invited", "suspended", "deleted"] },
        { id: "joined", kind: "date" },
      ],
    });
  });

  test("key problems and values that cannot be kept name the row", async () => {
    await expect(readTableFromPostgres({ url: pg.url, table: "uuid_dups" })).rejects.toThrow('postgres:uuid_dups:3: duplicate key "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11" (first seen on line 1)');
    await expect(readTableFromPostgres({ url: pg.url, table: "keyed_by_status" }, { key: "status" })).rejects.toThrow('the key "status" is enum (active, invited, suspended, deleted); a key is a number or text column');
    await expect(readTableFromPostgres({ url: pg.url, table: "big" })).rejects.toThrow('postgres:big:2: field "n": 9007199254740993 is beyond ±2^53 and would be rounded');
    await expect(readTableFromPostgres({ url: pg.url, table: "auth_users" }, { key: "uid" })).rejects.toThrow('--key "uid" is not a field of the input; fields: id, email, encrypted_password, status, created_at, raw_user_meta_data, is_super_admin');
  });

  test("the command line: snapshot build --from URL --table T -o F", () => {
    const out = join(dir, "cli.snap");
    const root = resolve(import.meta.dir, "..", "..");
    const result = Bun.spawnSync([process.execPath, join(root, "src", "cli.ts"), "snapshot", "build", "--from", pg.url, "--table", "users", "-o", out], { stdout: "pipe", stderr: "pipe" });
    const stderr = result.stderr.toString();
    expect(result.exitCode).toBe(0);
    expect(stderr).toContain("reading table users from PostgreSQL");
    expect(stderr).toContain("role enum (owner|admin|member)");
    expect(stderr).toMatch(/built .*cli\.snap: 3 rows/);
    const both = Bun.spawnSync([process.execPath, join(root, "src", "cli.ts"), "snapshot", "build", "data.ndjson", "--from", pg.url, "--table", "users"], { stdout: "pipe", stderr: "pipe" });
    expect(both.exitCode).not.toBe(0);
    expect(both.stderr.toString()).toContain("give an input file or --from, not both");
  });
});
