import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateUsers, writeRecords, writeUsers } from "../../src/generate/users.ts";
import { detectFormat, findFirstDuplicate, IngestError, openInput, readUserStream, readUsers, READ_CHUNK_BYTES, type RawColumns, STDIN_NAME } from "../../src/ingest/read.ts";
import { STATUS_VALUES, type UserRecord } from "../../src/generate/record.ts";
import { stringAt, unpackStrings } from "../../src/bits/byte-column.ts";

const dir = mkdtempSync(join(tmpdir(), "users-ingest-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCounter = 0;
/** Writes `content` to a fresh file named `*.ext` and returns its path. */
function file(ext: string, content: string | Uint8Array): string {
  const path = join(dir, `f${++fileCounter}.${ext}`);
  writeFileSync(path, content);
  return path;
}

/** The records of `columns`, as UserRecords. */
function records(columns: RawColumns): UserRecord[] {
  const out: UserRecord[] = [];
  for (let i = 0; i < columns.ids.length; i++) {
    out.push({ id: columns.ids[i], name: stringAt(columns.names, i), email: stringAt(columns.emails, i), status: STATUS_VALUES[columns.statusCodes[i]] });
  }
  return out;
}

/** Reads `path`, expecting an IngestError; returns it. */
async function failure(path: string): Promise<IngestError> {
  try {
    await readUsers(path);
  } catch (error) {
    if (error instanceof IngestError) return error;
    throw error;
  }
  throw new Error(`expected ${path} to fail`);
}

/** Expects `path` to fail on `line` with a reason containing `reason`. */
async function expectFailure(path: string, line: number, reason: string): Promise<void> {
  const error = await failure(path);
  expect(error.file).toBe(path);
  expect({ line: error.line, reason: error.reason }).toEqual({ line, reason: expect.stringContaining(reason) });
  expect(error.message).toBe(`${path}:${line}: ${error.reason}`);
}

const FORMATS = ["ndjson", "json", "csv"] as const;

const TRICKY: UserRecord[] = [
  { id: 1, name: "Smith, John", email: "john@example.com", status: "active" },
  { id: 2, name: 'Robert "Bob" Tables', email: "bob@example.com", status: "inactive" },
  { id: 3, name: "two\nlines", email: "two@example.com", status: "active" },
  { id: 4, name: "crlf\r\ninside", email: "crlf@example.com", status: "active" },
  { id: 5, name: "", email: "", status: "inactive" },
  { id: 6, name: "  padded  ", email: " spaced@example.com ", status: "active" },
  { id: 7, name: "\uFEFFbom first", email: "bom@example.com", status: "active" },
  { id: 8, name: "Émile Zoë 🎉 日本 Ωμέγα Жанна", email: "emile@example.com", status: "inactive" },
  { id: -9.5, name: "back\\slash \t tab", email: "b@example.com", status: "active" },
  { id: 1e15, name: '"', email: ",", status: "inactive" },
  { id: 11, name: '""', email: '",\n', status: "active" },
];

describe("readUsers round trip", () => {
  for (const format of FORMATS) {
    test(`${format}: generated rows read back identically, with line numbers`, async () => {
      const path = join(dir, `gen.${format}`);
      await writeUsers(path, { count: 5000, seed: 11, format });
      const columns = await readUsers(path);
      expect(records(columns)).toEqual([...generateUsers({ count: 5000, seed: 11 })]);
      expect(columns.ids).toBeInstanceOf(Float64Array);
      expect(columns.statusCodes).toBeInstanceOf(Uint8Array);
      expect(columns.lines).toBeInstanceOf(Uint32Array);
      expect(columns.lines.length).toBe(5000);
      // ndjson: record i on line i + 1; json and csv: i + 2 (after "[" or the header).
      const offset = format === "ndjson" ? 1 : 2;
      expect(Array.from(columns.lines.subarray(0, 3))).toEqual([offset, offset + 1, offset + 2]);
      expect(columns.lines[4999]).toBe(4999 + offset);
    });

    test(`${format}: commas, quotes, newlines, BOM-like and astral characters survive`, async () => {
      const path = join(dir, `tricky.${format}`);
      await writeRecords(path, TRICKY, format);
      const columns = await readUsers(path);
      expect(records(columns)).toEqual(TRICKY);
      if (format === "csv") {
        // Record 3 holds one newline, record 4 one more: later records start lower.
        expect(Array.from(columns.lines)).toEqual([2, 3, 4, 6, 8, 9, 10, 11, 12, 13, 14]);
      }
    });

    test(`${format}: records spanning the ${READ_CHUNK_BYTES >> 20} MiB read chunk`, async () => {
      const big = "ü".repeat(READ_CHUNK_BYTES / 2 + 12345) + "\nend";
      const rows: UserRecord[] = [
        { id: 1, name: "before", email: "a@b.c", status: "active" },
        { id: 2, name: big, email: "big@b.c", status: "inactive" },
        { id: 3, name: "after, with comma", email: "z@b.c", status: "active" },
      ];
      const path = join(dir, `span.${format}`);
      await writeRecords(path, rows, format);
      const progress: Array<[number, number | undefined]> = [];
      const columns = await readUsers(path, (read, total) => progress.push([read, total]));
      expect(records(columns)).toEqual(rows);
      const [read, total] = progress[progress.length - 1];
      expect(read).toBe(total as number);
      expect(progress.length).toBeGreaterThan(1);
    });
  }

  test("a 20 MB ndjson file with multi-byte names across chunk ends", async () => {
    const path = join(dir, "many.ndjson");
    await writeUsers(path, { count: 200_000, seed: 3, format: "ndjson" });
    const columns = await readUsers(path);
    expect(columns.ids.length).toBe(200_000);
    const expected = [...generateUsers({ count: 200_000, seed: 3 })];
    for (let i = 0; i < 200_000; i += 1) {
      const name = stringAt(columns.names, i);
      if (name !== expected[i].name) throw new Error(`row ${i}: ${name} !== ${expected[i].name}`);
    }
    expect(columns.lines[199_999]).toBe(200_000);
  });
});

describe("readUsers formats and edge cases", () => {
  test("empty and whitespace-only files are 0 rows in every format", async () => {
    for (const ext of ["ndjson", "json", "csv", "txt"]) {
      for (const content of ["", "  \n\n", "\uFEFF"]) {
        const columns = await readUsers(file(ext, content));
        expect(columns.ids.length).toBe(0);
        expect(unpackStrings(columns.names)).toEqual([]);
        expect(Array.from(columns.names.offsets)).toEqual([0]);
      }
    }
  });

  test("format sniffing for unknown extensions", async () => {
    expect(detectFormat("x.txt", '  [{"id":1}]')).toBe("json");
    expect(detectFormat("x.txt", '{"id":1}')).toBe("ndjson");
    expect(detectFormat("x", "id,name,email,status")).toBe("csv");
    expect(detectFormat("x.JSONL", "[")).toBe("ndjson");
    expect(detectFormat("x.json", '{"id":1}\n{"id":2}')).toBe("ndjson");
    const ndjson = file("dat", '{"id":1,"name":"a","email":"e","status":"active"}\n');
    expect((await readUsers(ndjson)).ids[0]).toBe(1);
    const csv = file("dat", "status,email,name,id\nactive,e,a,5\n");
    expect(records(await readUsers(csv))).toEqual([{ id: 5, name: "a", email: "e", status: "active" }]);
    const json = file("dat", '[{"id":1,"name":"a","email":"e","status":"inactive"}]');
    expect((await readUsers(json)).statusCodes[0]).toBe(1);
  });

  test("ndjson: blank lines and CRLF are allowed; lines count them", async () => {
    const path = file("ndjson", '\n{"id":1,"name":"a","email":"e","status":"active"}\r\n\r\n  \n{"id":2,"name":"b","email":"f","status":"inactive"}');
    const columns = await readUsers(path);
    expect(Array.from(columns.ids)).toEqual([1, 2]);
    expect(Array.from(columns.lines)).toEqual([2, 5]);
  });

  test("json: pretty-printed objects are numbered by the line of their '{'", async () => {
    const text = `[
  {
    "id": 10, "name": "a",
    "email": "x{}[]\\"", "status": "active", "extra": {"nested": [1, {"x": "}"}]}
  },
  {"id": 20, "name": "b", "email": "y", "status": "inactive"}
]
`;
    const columns = await readUsers(file("json", text));
    expect(Array.from(columns.ids)).toEqual([10, 20]);
    expect(stringAt(columns.emails, 0)).toBe('x{}[]"');
    expect(Array.from(columns.lines)).toEqual([2, 6]);
    expect((await readUsers(file("json", "[]"))).ids.length).toBe(0);
  });

  test("csv: header in any order, extra columns ignored, case-insensitive header and status", async () => {
    const path = file("csv", "Email, STATUS ,extra,Name,ID\r\ne1,Active,x,n1,1\r\n\r\ne2,INACTIVE,y,\"n, 2\",2e3\r\n");
    const columns = await readUsers(path);
    expect(records(columns)).toEqual([
      { id: 1, name: "n1", email: "e1", status: "active" },
      { id: 2000, name: "n, 2", email: "e2", status: "inactive" },
    ]);
    expect(Array.from(columns.lines)).toEqual([2, 4]);
  });

  test("csv: last record without a line end, and a final empty field", async () => {
    const columns = await readUsers(file("csv", "id,name,email,status\n1,a,b,active\n2,\"q\",,inactive"));
    expect(records(columns)).toEqual([
      { id: 1, name: "a", email: "b", status: "active" },
      { id: 2, name: "q", email: "", status: "inactive" },
    ]);
    const trailing = await readUsers(file("csv", "id,status,name,email\n1,active,a,"));
    expect(unpackStrings(trailing.emails)).toEqual([""]);
  });

  test("-0 and 0 are the same id", async () => {
    await expectFailure(file("csv", "id,name,email,status\n0,a,b,active\n-0,c,d,active\n"), 3, "duplicate id 0 (first seen on line 2)");
  });

  test("a large id file is checked for duplicates quickly", async () => {
    const ids = new Float64Array(1_000_000);
    for (let i = 0; i < ids.length; i++) ids[i] = (i * 7919) % 1_000_003;
    expect(findFirstDuplicate(ids, ids.length)).toBeNull();
    ids[900_000] = ids[10];
    ids[950_000] = ids[5];
    expect(findFirstDuplicate(ids, ids.length)).toEqual({ index: 900_000, firstIndex: 10 });
  });
});

describe("readUsers errors name the file and line", () => {
  const ok = (id: number): string => `{"id":${id},"name":"n${id}","email":"e${id}@x.org","status":"active"}`;

  describe("ndjson", () => {
    test("malformed JSON", async () => {
      await expectFailure(file("ndjson", `${ok(1)}\n${ok(2)}\n{"id":3,"name":\n`), 3, "malformed JSON");
    });
    test("id not a number", async () => {
      await expectFailure(file("ndjson", `${ok(1)}\n{"id":"abc","name":"n","email":"e","status":"active"}\n`), 2, 'id must be a finite number (got "abc")');
      await expectFailure(file("ndjson", `{"id":"42","name":"n","email":"e","status":"active"}\n`), 1, 'id must be a finite number (got "42")');
      await expectFailure(file("ndjson", `{"id":1e999,"name":"n","email":"e","status":"active"}\n`), 1, "id must be a finite number (got Infinity)");
    });
    test("missing fields and wrong types", async () => {
      await expectFailure(file("ndjson", `${ok(1)}\n\n{"id":2,"name":"n","status":"active"}\n`), 3, 'missing field "email"');
      await expectFailure(file("ndjson", `{"name":"n","email":"e","status":"active"}`), 1, 'missing field "id"');
      await expectFailure(file("ndjson", `{"id":1,"name":42,"email":"e","status":"active"}`), 1, "name must be a string (got 42)");
      await expectFailure(file("ndjson", `{"id":1,"name":null,"email":"e","status":"active"}`), 1, "name must be a string (got null)");
      await expectFailure(file("ndjson", `{"id":1,"name":"n","email":["e"],"status":"active"}`), 1, "email must be a string (got an array)");
      await expectFailure(file("ndjson", `{"id":1,"name":"n","email":"e"}`), 1, 'missing field "status"');
    });
    test("status outside the enum", async () => {
      await expectFailure(file("ndjson", `${ok(1)}\n{"id":2,"name":"n","email":"e","status":"pending"}`), 2, 'status must be one of active, inactive (got "pending")');
      await expectFailure(file("ndjson", `{"id":2,"name":"n","email":"e","status":1}`), 1, "status must be one of active, inactive (got 1)");
    });
    test("lines off the canonical fast path are still fully checked", async () => {
      const canonical = (id: string, status = "active"): string => `{"id":${id},"name":"n","email":"e","status":"${status}"}`;
      await expectFailure(file("ndjson", `${canonical("1")}\n${canonical("01")}\n`), 2, "malformed JSON");
      await expectFailure(file("ndjson", `${canonical("-")}\n`), 1, "malformed JSON");
      await expectFailure(file("ndjson", `${canonical("1")} x\n`), 1, "malformed JSON");
      await expectFailure(file("ndjson", `${canonical("1")}}\n`), 1, "malformed JSON");
      // Extra CR is JSON whitespace: accepted by the general path.
      expect((await readUsers(file("ndjson", `${canonical("1")}\r\r\n`))).ids[0]).toBe(1);
      await expectFailure(file("ndjson", `{"id":1,"name":"a\tb","email":"e","status":"active"}\n`), 1, "malformed JSON");
      const columns = await readUsers(
        file(
          "ndjson",
          [
            canonical("-0"),
            canonical("9007199254740992"),
            canonical("2.5", "Active"),
            canonical("-7e2", "INACTIVE"),
            `{"status":"inactive","email":"e","name":"x\\"y\\u00e9","id":3}`,
            `  {"id" : 4, "name":"a", "email":"b", "status":"active", "more": 1}  `,
            canonical("5") + "\r",
          ].join("\n"),
        ),
      );
      expect(Array.from(columns.ids)).toEqual([0, 2 ** 53, 2.5, -700, 3, 4, 5]);
      expect(Object.is(columns.ids[0], 0)).toBe(true);
      expect(Array.from(columns.statusCodes)).toEqual([0, 0, 0, 1, 1, 0, 0]);
      expect(stringAt(columns.names, 4)).toBe('x"yé');
    });
    test("record not an object", async () => {
      await expectFailure(file("ndjson", `${ok(1)}\n[1,2]\n`), 2, "record must be a JSON object (got an array)");
      await expectFailure(file("ndjson", `${ok(1)}\n"text"\n`), 2, 'record must be a JSON object (got "text")');
    });
    test("duplicate id, reported on the later line", async () => {
      await expectFailure(file("ndjson", `${ok(1)}\n${ok(7)}\n${ok(3)}\n${ok(4)}\n${ok(7)}\n${ok(3)}\n`), 5, "duplicate id 7 (first seen on line 2)");
    });
    test("the first bad record wins: a duplicate before a malformed line", async () => {
      await expectFailure(file("ndjson", `${ok(1)}\n${ok(1)}\n${ok(3)}\n{oops\n`), 2, "duplicate id 1 (first seen on line 1)");
    });
    test("lone surrogate escape", async () => {
      await expectFailure(file("ndjson", `${ok(1)}\n{"id":2,"name":"bad \\ud800 here","email":"e","status":"active"}\n`), 2, "name is not well-formed Unicode (lone surrogate U+D800)");
      await expectFailure(file("ndjson", `{"id":2,"name":"ok \\ud83c\\udf89","email":"\\udc00","status":"active"}\n`), 1, "email is not well-formed Unicode (lone surrogate U+DC00)");
    });
    test("invalid UTF-8 bytes, including an encoded surrogate", async () => {
      const head = new TextEncoder().encode(`${ok(1)}\n${ok(2)}\n{"id":3,"name":"`);
      const tail = new TextEncoder().encode(`","email":"e","status":"active"}\n`);
      for (const bad of [[0xff], [0xed, 0xa0, 0x80], [0xc3]]) {
        const bytes = new Uint8Array([...head, ...bad, ...tail]);
        await expectFailure(file("ndjson", bytes), 3, "invalid UTF-8");
      }
      // Truncated sequence at the very end of the file.
      await expectFailure(file("ndjson", new Uint8Array([...new TextEncoder().encode(`${ok(1)}\n`), 0xe2, 0x82])), 2, "invalid UTF-8");
    });
  });

  describe("json array", () => {
    test("not an array", async () => {
      await expectFailure(file("json", "\n\n  5"), 3, "malformed JSON: expected '['");
    });
    test("bad object on its start line", async () => {
      await expectFailure(file("json", `[\n${ok(1)},\n{"id": 2,\n "name": oops}\n]`), 3, "malformed JSON");
      await expectFailure(file("json", `[\n${ok(1)},\n{"id": 2,\n "name": "n", "email": "e", "status": "gone"}\n]`), 3, 'status must be one of active, inactive (got "gone")');
    });
    test("elements that are not objects", async () => {
      await expectFailure(file("json", `[\n${ok(1)},\n 42\n]`), 3, "record must be a JSON object (got a number)");
      await expectFailure(file("json", `[null]`), 1, "record must be a JSON object (got null)");
    });
    test("missing comma, trailing comma, unclosed array, trailing data", async () => {
      await expectFailure(file("json", `[\n${ok(1)}\n${ok(2)}\n]`), 3, "expected ',' or ']'");
      await expectFailure(file("json", `[\n${ok(1)},\n]`), 3, "where an array element was expected");
      await expectFailure(file("json", `[\n${ok(1)},\n${ok(2)}\n`), 4, "not closed");
      await expectFailure(file("json", `[\n${ok(1)},\n{"id":2,\n`), 3, "end of file inside an object");
      await expectFailure(file("json", `[${ok(1)}]\n\nx`), 3, "after the end of the array");
    });
    test("duplicate id", async () => {
      await expectFailure(file("json", `[\n${ok(5)},\n${ok(6)},\n${ok(5)}\n]`), 4, "duplicate id 5 (first seen on line 2)");
    });
  });

  describe("csv", () => {
    const header = "id,name,email,status\n";
    test("header missing a column or naming one twice", async () => {
      await expectFailure(file("csv", "id,name,status\n1,a,active\n"), 1, 'missing "email"');
      await expectFailure(file("csv", "id,name,email,status,Name\n"), 1, 'names column "name" twice');
    });
    test("wrong field count", async () => {
      await expectFailure(file("csv", `${header}1,a,b,active\n2,a,active\n`), 3, "CSV row has 3 fields, header has 4");
      await expectFailure(file("csv", `${header}1,a,b,active,extra\n`), 2, "CSV row has 5 fields, header has 4");
    });
    test("unterminated quote, reported on the record's first line", async () => {
      await expectFailure(file("csv", `${header}1,a,b,active\n2,"open\nstill open\n`), 3, "unterminated quoted field");
    });
    test("quote inside an unquoted field, text after a closing quote, bare CR", async () => {
      await expectFailure(file("csv", `${header}1,ab"c,e,active\n`), 2, "quote inside an unquoted field");
      await expectFailure(file("csv", `${header}1,"ab"c,e,active\n`), 2, "after a closing quote");
      await expectFailure(file("csv", `${header}1,a\rb,e,active\n`), 2, "bare carriage return");
    });
    test("ids: empty, blank, not a number", async () => {
      await expectFailure(file("csv", `${header}1,a,b,active\n,a,b,active\n`), 3, 'id must be a number in JSON syntax (got "")');
      await expectFailure(file("csv", `${header}  ,a,b,active\n`), 2, 'id must be a number in JSON syntax (got "  ")');
      await expectFailure(file("csv", `${header}abc,a,b,active\n`), 2, 'id must be a number in JSON syntax (got "abc")');
      await expectFailure(file("csv", `${header}1e999,a,b,active\n`), 2, 'id must be a finite number (got "1e999")');
    });
    test("status outside the enum", async () => {
      await expectFailure(file("csv", `${header}1,a,b,pending\n`), 2, 'status must be one of active, inactive (got "pending")');
      await expectFailure(file("csv", `${header}1,a,b,\n`), 2, 'status must be one of active, inactive (got "")');
    });
    test("lines after multi-line quoted fields stay right", async () => {
      await expectFailure(file("csv", `${header}1,"a\nb\nc",e,active\r\n2,x,y,nope\n`), 5, "status must be one of");
    });
    test("duplicate id after a multi-line record", async () => {
      await expectFailure(file("csv", `${header}1,"a\nb",e,active\n1,x,y,active\n`), 4, "duplicate id 1 (first seen on line 2)");
    });
  });
});

describe("properties (fast-check)", () => {
  // Any well-formed string (all planes, control characters, quotes, commas, CR, LF).
  const text = fc.string({ unit: "binary", maxLength: 12 });
  const statusText = fc.constantFrom<UserRecord["status"]>("active", "inactive");
  const rowsArb = fc
    .uniqueArray(fc.oneof(fc.integer({ min: -1e9, max: 1e9 }), fc.double({ noNaN: true, min: -(2 ** 53), max: 2 ** 53 })), {
      maxLength: 12,
      comparator: (a, b) => a === b,
    })
    .chain((ids) =>
      fc.tuple(...ids.map((id) => fc.record({ id: fc.constant(id + 0), name: text, email: text, status: statusText }))),
    );

  for (const format of FORMATS) {
    test(`${format}: write then read with any chunk size gives the records back`, async () => {
      let round = 0;
      await fc.assert(
        fc.asyncProperty(rowsArb, fc.integer({ min: 4, max: 40 }), async (rows, chunkBytes) => {
          const path = join(dir, `prop-${format}-${round++}.${format}`);
          await writeRecords(path, rows, format);
          const columns = await readUsers(path, undefined, { chunkBytes });
          expect(records(columns)).toEqual(rows);
        }),
        { numRuns: 150 },
      );
    });
  }

  test("ndjson: the byte fast path agrees with JSON.parse", async () => {
    // A leading space on every line forces the general (JSON.parse) path.
    const piece = fc.constantFrom('{"id":', ',"name":"', '","email":"', '","status":"', 'active"}', 'inactive"}', "0", "1", "9", "-", ".", "e", "a", "é", "\\", '"', "\t", " ", "\r", "}");
    const lineArb = fc.array(piece, { maxLength: 14 }).map((parts) => parts.join(""));
    const canonicalish = fc.tuple(fc.integer({ min: -1e6, max: 1e6 }), fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), fc.constantFrom("active", "inactive", "Active", "x")).map(
      ([id, name, email, status]) => `{"id":${id},"name":${JSON.stringify(name)},"email":${JSON.stringify(email)},"status":"${status}"}`,
    );
    const outcome = async (path: string): Promise<unknown> => {
      try {
        return records(await readUsers(path, undefined, { chunkBytes: 64 }));
      } catch (error) {
        if (!(error instanceof IngestError)) throw error;
        return { line: error.line };
      }
    };
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(lineArb, canonicalish), { maxLength: 6 }), async (lines) => {
        const fast = await outcome(file("ndjson", lines.join("\n")));
        const slow = await outcome(file("ndjson", lines.map((l) => ` ${l}`).join("\n")));
        expect(fast).toEqual(slow);
      }),
      { numRuns: 300 },
    );
  });

  test("arbitrary bytes either read or fail with an IngestError", async () => {
    const alphabet = ["{", "}", "[", "]", '"', ",", ":", "\n", "\r", "\\", " ", "0", "1", "-", "a", "id", "name", "email", "status", "active", "é", "\uD800",
      '{"id":', ',"name":"', '","email":"', '","status":"', 'active"}', 'inactive"}'];
    const junk = fc.array(fc.constantFrom(...alphabet), { maxLength: 40 }).map((parts) => parts.join(""));
    let round = 0;
    await fc.assert(
      fc.asyncProperty(junk, fc.constantFrom("ndjson", "json", "csv", "txt"), fc.integer({ min: 4, max: 16 }), async (content, ext, chunkBytes) => {
        const path = file(ext, content);
        round++;
        try {
          const columns = await readUsers(path, undefined, { chunkBytes });
          expect(columns.names.offsets.length).toBe(columns.ids.length + 1);
        } catch (error) {
          if (!(error instanceof IngestError)) throw error;
          expect(error.line).toBeGreaterThanOrEqual(1);
          expect(error.line).toBeLessThanOrEqual(content.split("\n").length);
        }
      }),
      { numRuns: 400 },
    );
  });
});

/** A file of one record per id literal (written as given, not through a JS number), in `format`. */
function idFile(format: (typeof FORMATS)[number], idTexts: string[]): string {
  const objects = idTexts.map((id, i) => `{"id":${id},"name":"n${i}","email":"e${i}","status":"active"}`);
  if (format === "ndjson") return file("ndjson", `${objects.join("\n")}\n`);
  if (format === "json") return file("json", `[\n${objects.join(",\n")}\n]\n`);
  return file("csv", `id,name,email,status\n${idTexts.map((id, i) => `${id},n${i},e${i},active`).join("\n")}\n`);
}

describe("ids beyond ±2^53 are refused, never rounded (docs/api.md)", () => {
  for (const format of FORMATS) {
    // ndjson and csv: record k on line k + 1 (after the header for csv); json: line k + 1 after "[".
    const lineOf = (k: number) => (format === "ndjson" ? k : k + 1);

    test(`${format}: 2^53 + 1 next to 2^53 is out of range, not a duplicate`, async () => {
      await expectFailure(idFile(format, ["9007199254740992", "9007199254740993"]), lineOf(2), "id 9007199254740993 is beyond ±2^53 (ids must be exact in a double)");
      await expectFailure(idFile(format, ["1", "-9007199254740993"]), lineOf(2), "id -9007199254740993 is beyond ±2^53 (ids must be exact in a double)");
    });

    test(`${format}: literals beyond 2^53, or rounded to it, are refused`, async () => {
      for (const id of ["9007199254740994", "12345678901234567890", "1e16", "-1E300", "9007199254740992.5", "90071992547409921e-1"]) {
        await expectFailure(idFile(format, ["7", id]), lineOf(2), `id ${id} is beyond ±2^53 (ids must be exact in a double)`);
      }
      // 2^53 - 0.5 parses to 2^53 (ties to even): not beyond, but not exact either.
      await expectFailure(idFile(format, ["9007199254740991.5"]), lineOf(1), "id 9007199254740991.5 is not exact in a double (it would be rounded to 9007199254740992");
    });

    test(`${format}: ±2^53 itself, in any spelling, is accepted`, async () => {
      for (const id of ["9007199254740992", "9007199254740992.000", "9.007199254740992e15", "900719925474099200e-2", "0.9007199254740992E+16"]) {
        expect(Array.from((await readUsers(idFile(format, [id]))).ids)).toEqual([2 ** 53]);
      }
      const columns = await readUsers(idFile(format, ["-9007199254740992", "9007199254740991", "-9007199254740991"]));
      expect(Array.from(columns.ids)).toEqual([-(2 ** 53), 2 ** 53 - 1, -(2 ** 53 - 1)]);
    });
  }

  test("json: only the record's own id counts (nested ids, duplicate keys)", async () => {
    const nested = `{"id":9007199254740992,"name":"n","email":"e","status":"active","extra":{"id":9007199254740993}}`;
    expect(Array.from((await readUsers(file("ndjson", `${nested}\n`))).ids)).toEqual([2 ** 53]);
    // JSON.parse keeps the last of two equal keys: that is the id checked.
    const twice = `{"id":1,"name":"n","email":"e","status":"active","id":9007199254740993}`;
    await expectFailure(file("ndjson", `${twice}\n`), 1, "id 9007199254740993 is beyond ±2^53");
    await expectFailure(file("json", `[${twice}]`), 1, "id 9007199254740993 is beyond ±2^53");
  });

  test("a written double beyond ±2^53 is refused in every format", async () => {
    await fc.assert(
      fc.asyncProperty(fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => Math.abs(x) > 2 ** 53), fc.constantFrom(...FORMATS), async (id, format) => {
        const path = join(dir, `far-${fileCounter++}.${format}`);
        await writeRecords(path, [{ id, name: "n", email: "e", status: "active" }], format);
        const error = await failure(path);
        expect(error.reason).toContain("is beyond ±2^53");
      }),
      { numRuns: 60 },
    );
  });
});

describe("CSV ids are JSON numbers (docs/api.md: no hex, no spaces, no 1_000)", () => {
  const header = "id,name,email,status\n";
  test("anything outside the JSON number grammar is refused, quoted or not", async () => {
    const bad = ["0x10", "0b101", "0o7", " 5 ", "5 ", " 5", "1_000", "Infinity", "-Infinity", "NaN", "+5", ".5", "5.", "-.5", "01", "-01", "1e", "1e+", "e3", "--1", "1.2.3", "١٢", "５", "\t7"];
    for (const id of bad) {
      await expectFailure(file("csv", `${header}1,a,b,active\n${id},c,d,active\n`), 3, `id must be a number in JSON syntax (got ${JSON.stringify(id)})`);
      await expectFailure(file("csv", `${header}"${id}",c,d,active\n`), 2, `id must be a number in JSON syntax (got ${JSON.stringify(id)})`);
    }
  });

  test("the JSON number grammar is read as JSON reads it", async () => {
    const good: Array<[string, number]> = [["1e3", 1000], ["-0", 0], ["1.0", 1], ["2.5", 2.5], ["-7E+2", -700], ["0.5e-1", 0.05], ["10", 10], ["-3.25", -3.25], ["1E2", 100]];
    const columns = await readUsers(file("csv", `${header}${good.map(([id], i) => `${id},n${i},e${i},active`).join("\n")}\n`));
    expect(Array.from(columns.ids)).toEqual(good.map(([, id]) => id));
    expect(Object.is(columns.ids[1], 0)).toBe(true);
    // As JSON reads them (-0 stored as 0, the same id).
    for (const [id, value] of good) expect(JSON.parse(id) + 0).toBe(value);
  });
});

describe("input streams: gzip, standard input, chunks, --format", () => {
  const gz = (ext: string, content: string | Uint8Array<ArrayBuffer>): string =>
    file(`${ext}.gz`, Bun.gzipSync(typeof content === "string" ? new TextEncoder().encode(content) : content));

  for (const format of FORMATS) {
    test(`${format}.gz: gunzipped while read, format from the name before .gz`, async () => {
      const plain = join(dir, `gzsrc.${format}`);
      await writeUsers(plain, { count: 3000, seed: 4, format });
      const bytes = await Bun.file(plain).bytes();
      const formats: unknown[] = [];
      const progress: Array<[number, number | undefined]> = [];
      const path = gz(format, bytes);
      const columns = await readUsers(path, (read, total) => progress.push([read, total]), { onFormat: (info) => formats.push(info) });
      expect(records(columns)).toEqual([...generateUsers({ count: 3000, seed: 4 })]);
      expect(Array.from(columns.lines.subarray(0, 2))).toEqual(format === "ndjson" ? [1, 2] : [2, 3]);
      expect(formats).toEqual([{ file: path, format, gzip: true }]);
      // Progress counts the compressed bytes, up to the file's size.
      const size = Bun.file(path).size;
      expect(progress[progress.length - 1]).toEqual([size, size]);
    });
  }

  test(".gz without a format extension: the content decides; several gzip members are one stream", async () => {
    const one = '{"id":1,"name":"a","email":"e","status":"active"}\n';
    const two = '{"id":2,"name":"b","email":"f","status":"inactive"}\n';
    const path = file("gz", new Uint8Array([...Bun.gzipSync(new TextEncoder().encode(one)), ...Bun.gzipSync(new TextEncoder().encode(two))]));
    const formats: unknown[] = [];
    const columns = await readUsers(path, undefined, { onFormat: (info) => formats.push(info) });
    expect(Array.from(columns.ids)).toEqual([1, 2]);
    expect(formats).toEqual([{ file: path, format: "ndjson", gzip: true }]);
    expect((await readUsers(gz("data", "id,name,email,status\n5,a,b,active\n"))).ids[0]).toBe(5);
  });

  test("corrupt or truncated gzip data names the file and the line reached", async () => {
    const notGzip = file("csv.gz", "id,name,email,status\n1,a,b,active\n");
    await expectFailure(notGzip, 1, "not valid gzip data");
    const lines = Array.from({ length: 2000 }, (_, i) => `{"id":${i + 1},"name":"name ${i}","email":"e${i}@x.org","status":"active"}`).join("\n");
    const whole = Bun.gzipSync(new TextEncoder().encode(lines), { level: 0 });
    const error = await failure(file("ndjson.gz", whole.subarray(0, whole.length >> 1)));
    expect(error.reason).toContain("the gzip data is truncated");
    expect(error.line).toBeGreaterThan(100);
    expect(error.line).toBeLessThan(2000);
  });

  test("bad records in gzip data are found as in plain files", async () => {
    await expectFailure(gz("csv", "id,name,email,status\n1,a,b,active\n0x10,c,d,active\n"), 3, 'id must be a number in JSON syntax (got "0x10")');
    await expectFailure(gz("ndjson", '{"id":1,"name":"a","email":"e","status":"active"}\n{"id":1,"name":"a","email":"e","status":"active"}\n'), 2, "duplicate id 1");
  });

  test("readUserStream: any split into chunks, BOM included, reads the same records", async () => {
    const rows: UserRecord[] = [...TRICKY, ...generateUsers({ count: 50, seed: 9 })].map((r, i) => ({ ...r, id: i + 1 }));
    for (const format of FORMATS) {
      const path = join(dir, `split.${format}`);
      await writeRecords(path, rows, format);
      const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...(await Bun.file(path).bytes())]);
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), async (cuts) => {
          cuts.sort((a, b) => a - b);
          const edges = [0, ...cuts, bytes.length];
          const chunks = (async function* () {
            for (let i = 1; i < edges.length; i++) yield bytes.slice(edges[i - 1], edges[i]);
          })();
          // No extension: the format comes from the content.
          const columns = await readUserStream(chunks, "<stdin>");
          expect(records(columns)).toEqual(rows);
        }),
        { numRuns: 40 },
      );
    }
  });

  test("readUserStream: tiny chunks (1 byte) and a record far longer than a chunk", async () => {
    const long = "x".repeat(200_000);
    const text = `\n\n{"id":1,"name":"${long}","email":"e","status":"active"}\n{"id":2,"name":"b","email":"f","status":"inactive"}`;
    const bytes = new TextEncoder().encode(text);
    const bySize = (size: number) =>
      (async function* () {
        for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
      })();
    for (const size of [1, 7, 70_000]) {
      const columns = await readUserStream(bySize(size), "s.ndjson");
      expect(Array.from(columns.ids)).toEqual([1, 2]);
      expect(Array.from(columns.lines)).toEqual([3, 4]);
      expect(stringAt(columns.names, 0)).toBe(long);
    }
  });

  test("errors of standard input are named <stdin>", async () => {
    const source = await openInput("-", {
      stdin: (async function* () {
        yield new TextEncoder().encode('{"id":1,"name":"a","email":"e","status":"active"}\n{"id":');
        yield new TextEncoder().encode('2,"name":"b","email":"f","status":"pending"}\n');
      })(),
    });
    expect(source.file).toBe(STDIN_NAME);
    expect(source.totalBytes).toBeUndefined();
    const error = await readUserStream(source.chunks, source.file).catch((e) => e);
    expect(error).toBeInstanceOf(IngestError);
    expect(error.message).toBe('<stdin>:2: status must be one of active, inactive (got "pending")');
  });

  test("the format option overrides the name and the content", async () => {
    const csvText = "id,name,email,status\n3,a,b,active\n";
    expect((await readUsers(file("txt", csvText), undefined, { format: "csv" })).ids[0]).toBe(3);
    // A .csv name holding NDJSON, read as NDJSON.
    expect((await readUsers(file("csv", '{"id":4,"name":"a","email":"e","status":"active"}\n'), undefined, { format: "ndjson" })).ids[0]).toBe(4);
    // A CSV file forced to be read as a JSON array fails as JSON.
    const path = file("csv", csvText);
    const asJson = await readUsers(path, undefined, { format: "json" }).catch((e) => e);
    expect(asJson).toBeInstanceOf(IngestError);
    expect(asJson.message).toBe(`${path}:1: malformed JSON: expected '[' to open an array of user objects (got "i")`);
  });
});
