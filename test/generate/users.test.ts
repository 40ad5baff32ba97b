import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { csvField, generateUsers, writeRecords, writeUsers } from "../../src/generate/users.ts";
import { ROLE_VALUES, WIDE_COLUMNS, type WideUserRecord } from "../../src/generate/wide.ts";
import type { UserRecord } from "../../src/generate/record.ts";

const dir = mkdtempSync(join(tmpdir(), "users-generate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("generateUsers", () => {
  test("is deterministic for a seed and differs across seeds", () => {
    const a = [...generateUsers({ count: 2000, seed: 42 })];
    const b = [...generateUsers({ count: 2000, seed: 42 })];
    const c = [...generateUsers({ count: 2000, seed: 43 })];
    expect(b).toEqual(a);
    let same = 0;
    for (let i = 0; i < a.length; i++) if (a[i].name === c[i].name) same++;
    expect(same).toBeLessThan(100);
  });

  test("a shorter run is a prefix of a longer one", () => {
    const short = [...generateUsers({ count: 100, seed: 7 })];
    const long = [...generateUsers({ count: 1000, seed: 7 })];
    expect(long.slice(0, 100)).toEqual(short);
  });

  test("golden: the first rows of seed 1 stay the same", () => {
    // Pinned output (faker 10.6.0): a change here changes every generated dataset.
    expect([...generateUsers({ count: 3, seed: 1 })]).toEqual([
      { id: 1, name: "Rieke Kleinert", email: "rkleinert1@yahoo.com", status: "active" },
      { id: 2, name: "Ilaçın Bilen", email: "Ilacin.2@hotmail.com", status: "inactive" },
      { id: 3, name: "小谷 絵美", email: "jhermann3@ezweb.ne.jp", status: "active" },
    ]);
  });

  test("startId shifts the ids", () => {
    const rows = [...generateUsers({ count: 5, seed: 1, startId: 1000 })];
    expect(rows.map((r) => r.id)).toEqual([1000, 1001, 1002, 1003, 1004]);
    expect(rows[0].email).toMatch(/1000@/);
  });

  test("count 0 gives no rows; bad options throw RangeError", () => {
    expect([...generateUsers({ count: 0, seed: 1 })]).toEqual([]);
    expect(() => [...generateUsers({ count: -1, seed: 1 })]).toThrow(RangeError);
    expect(() => [...generateUsers({ count: 1.5, seed: 1 })]).toThrow(RangeError);
    expect(() => [...generateUsers({ count: 1, seed: 1, startId: -3 })]).toThrow(RangeError);
    expect(() => [...generateUsers({ count: 10, seed: 1, startId: Number.MAX_SAFE_INTEGER })]).toThrow(RangeError);
  });

  describe("at 200k rows", () => {
    const n = 200_000;
    const rows = [...generateUsers({ count: n, seed: 2024 })];

    test("ids and emails are unique; the email's trailing digits are the id", () => {
      const ids = new Set<number>();
      const emails = new Set<string>();
      for (let i = 0; i < n; i++) {
        ids.add(rows[i].id);
        emails.add(rows[i].email.toLowerCase());
      }
      expect(ids.size).toBe(n);
      expect(emails.size).toBe(n);
      for (let i = 0; i < n; i += 997) {
        expect(rows[i].email).toMatch(new RegExp(`[^0-9]${rows[i].id}@`));
      }
    });

    test("emails are ASCII and look like addresses", () => {
      for (let i = 0; i < n; i++) {
        const email = rows[i].email;
        if (!/^[A-Za-z][A-Za-z._]*[0-9]+@[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(email)) throw new Error(`bad email ${email}`);
      }
    });

    test("about 70% are active", () => {
      let active = 0;
      for (let i = 0; i < n; i++) if (rows[i].status === "active") active++;
      expect(active / n).toBeGreaterThan(0.69);
      expect(active / n).toBeLessThan(0.71);
      for (let i = 0; i < n; i++) expect(["active", "inactive"]).toContain(rows[i].status);
    });

    test("names mix scripts, accents, digits and case", () => {
      const share = (re: RegExp): number => {
        let count = 0;
        for (let i = 0; i < n; i++) if (re.test(rows[i].name)) count++;
        return count / n;
      };
      // Latin letters with diacritics (precomposed or combining).
      expect(share(/[\u00C0-\u024F\u1E00-\u1EFF]/)).toBeGreaterThan(0.1);
      expect(share(/[\u0400-\u04FF]/)).toBeGreaterThan(0.1);
      expect(share(/[\u0370-\u03FF]/)).toBeGreaterThan(0.03);
      const cjk = share(/[\u3040-\u30FF\u4E00-\u9FFF]/);
      expect(cjk).toBeGreaterThan(0.01);
      expect(cjk).toBeLessThan(0.1);
      expect(share(/^[A-Za-z .'"-]+$/)).toBeGreaterThan(0.3);
      expect(share(/[0-9]/)).toBeGreaterThan(0.001);
      expect(share(/ III$/)).toBeGreaterThan(0);
      expect(share(/, Jr\.$/)).toBeGreaterThan(0);
      expect(share(/"/)).toBeGreaterThan(0);
      expect(rows.some((r) => /[a-z]/.test(r.name) && r.name === r.name.toLowerCase() && /^[a-z]/.test(r.name))).toBe(true);
      expect(rows.some((r) => /[A-Z]{3}/.test(r.name) && r.name === r.name.toUpperCase())).toBe(true);
    });

    test("names repeat (ties are realistic) but are varied", () => {
      const distinct = new Set(rows.map((r) => r.name)).size;
      expect(distinct).toBeGreaterThan(n * 0.5);
      expect(distinct).toBeLessThan(n);
    });
  });
});

describe("csvField", () => {
  test("quotes only when needed, doubling quotes (RFC 4180)", () => {
    expect(csvField("plain")).toBe("plain");
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("two\nlines")).toBe('"two\nlines"');
    expect(csvField("cr\r")).toBe('"cr\r"');
    expect(csvField("")).toBe("");
  });
});

describe("writeUsers", () => {
  test("writes ndjson, json and csv with the documented layout", async () => {
    const expected = [...generateUsers({ count: 50, seed: 5 })];
    for (const format of ["ndjson", "json", "csv"] as const) {
      const path = join(dir, `small.${format}`);
      const progress: number[] = [];
      await writeUsers(path, { count: 50, seed: 5, format }, (rows) => progress.push(rows));
      expect(progress[progress.length - 1]).toBe(50);
      const text = readFileSync(path, "utf8");
      if (format === "ndjson") {
        const lines = text.split("\n");
        expect(lines.length).toBe(51);
        expect(lines[50]).toBe("");
        expect(lines.slice(0, 50).map((l) => JSON.parse(l))).toEqual(expected);
      } else if (format === "json") {
        expect(JSON.parse(text)).toEqual(expected);
        const lines = text.split("\n");
        expect(lines[0]).toBe("[");
        expect(JSON.parse(lines[1].replace(/,$/, ""))).toEqual(expected[0]);
        expect(lines[51]).toBe("]");
      } else {
        const lines = text.split("\r\n");
        expect(lines[0]).toBe("id,name,email,status");
        expect(lines[1].startsWith(`1,`)).toBe(true);
      }
    }
  });

  test("same seed writes byte-identical files", async () => {
    const a = join(dir, "a.ndjson");
    const b = join(dir, "b.ndjson");
    await writeUsers(a, { count: 3000, seed: 9, format: "ndjson" });
    await writeUsers(b, { count: 3000, seed: 9, format: "ndjson" });
    expect(readFileSync(a).equals(readFileSync(b))).toBe(true);
  });

  test("an empty dataset is a valid file in each format", async () => {
    for (const format of ["ndjson", "json", "csv"] as const) {
      const path = join(dir, `empty.${format}`);
      await writeUsers(path, { count: 0, seed: 1, format });
      const text = readFileSync(path, "utf8");
      if (format === "json") expect(JSON.parse(text)).toEqual([]);
      if (format === "ndjson") expect(text).toBe("");
      if (format === "csv") expect(text).toBe("id,name,email,status\r\n");
    }
  });
});

describe("writeRecords failure leaves no file", () => {
  function* failing(after: number): Generator<UserRecord> {
    for (let i = 0; i < after; i++) yield { id: i + 1, name: `n${i}`, email: `e${i}@x.org`, status: "active" };
    throw new Error("boom");
  }

  test("a failing record source removes the temporary file and creates no output", async () => {
    const sub = join(dir, "fail");
    mkdirSync(sub);
    const path = join(sub, "out.ndjson");
    await expect(writeRecords(path, failing(200_000), "ndjson")).rejects.toThrow("boom");
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(sub)).toEqual([]);
  });

  test("an existing file is kept unchanged when the rewrite fails", async () => {
    const sub = join(dir, "keep");
    mkdirSync(sub);
    const path = join(sub, "out.csv");
    writeFileSync(path, "old content");
    await expect(writeRecords(path, failing(10), "csv")).rejects.toThrow("boom");
    expect(readFileSync(path, "utf8")).toBe("old content");
    expect(readdirSync(sub)).toEqual(["out.csv"]);
  });

  test("a missing directory rejects and creates nothing", async () => {
    const path = join(dir, "no-such-dir", "out.json");
    await expect(writeUsers(path, { count: 10, seed: 1, format: "json" })).rejects.toThrow();
    expect(existsSync(join(dir, "no-such-dir"))).toBe(false);
  });

  test("a non-finite id rejects", async () => {
    const path = join(dir, "nan.ndjson");
    const records: UserRecord[] = [{ id: Number.NaN, name: "x", email: "x@y.z", status: "active" }];
    await expect(writeRecords(path, records, "ndjson")).rejects.toThrow(TypeError);
    expect(existsSync(path)).toBe(false);
  });
});

/** One CSV cell: its text and whether it was quoted (`""` is the empty string, an empty field null). */
interface CsvCell {
  text: string;
  quoted: boolean;
}

/** A strict RFC 4180 parse: records end with CRLF (or LF); quoted fields may hold `,`, `""`, CR and LF. */
function parseCsv(text: string): CsvCell[][] {
  const records: CsvCell[][] = [];
  let record: CsvCell[] = [];
  let i = 0;
  while (i < text.length) {
    let cell: CsvCell;
    if (text[i] === '"') {
      let value = "";
      i++;
      for (;;) {
        if (i >= text.length) throw new Error("unterminated quoted field");
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            value += '"';
            i += 2;
          } else {
            i++;
            break;
          }
        } else value += text[i++];
      }
      cell = { text: value, quoted: true };
    } else {
      let end = i;
      while (end < text.length && text[end] !== "," && text[end] !== "\r" && text[end] !== "\n") end++;
      const value = text.slice(i, end);
      if (value.includes('"')) throw new Error(`quote inside an unquoted field: ${value}`);
      cell = { text: value, quoted: false };
      i = end;
    }
    record.push(cell);
    if (text[i] === ",") i++;
    else if (text[i] === "\r" && text[i + 1] === "\n") {
      records.push(record);
      record = [];
      i += 2;
    } else if (text[i] === "\n") {
      records.push(record);
      record = [];
      i++;
    } else if (i < text.length) throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i}`);
  }
  if (record.length > 0) records.push(record);
  return records;
}

/** A wide record back from its CSV cells (header order), null for an unquoted empty field. */
function wideFromCsv(cells: CsvCell[]): WideUserRecord {
  const orNull = (c: CsvCell): string | null => (c.text === "" && !c.quoted ? null : c.text);
  const [id, name, email, status, createdAt, birthday, role, age, verified, notes, prefs] = cells;
  if (!["true", "false"].includes(verified.text)) throw new Error(`verified ${verified.text}`);
  return {
    id: Number(id.text),
    name: name.text,
    email: email.text,
    status: status.text as WideUserRecord["status"],
    created_at: createdAt.text,
    birthday: orNull(birthday),
    role: role.text as WideUserRecord["role"],
    age: orNull(age) === null ? null : Number(age.text),
    verified: verified.text === "true",
    notes: orNull(notes),
    prefs: orNull(prefs) === null ? null : JSON.parse(prefs.text),
  };
}

/** Age in whole years on 2025-01-01 of someone born on `birthday` (`YYYY-MM-DD`). */
function ageOn20250101(birthday: string): number {
  const [y, m, d] = birthday.split("-").map(Number);
  // The birthday has come by January 1st only when it is January 1st.
  return 2025 - y - (m === 1 && d === 1 ? 0 : 1);
}

describe("generateUsers wide", () => {
  const n = 10_000;
  const rows = [...generateUsers({ count: n, seed: 2024, wide: true })];
  const HEADER = "id,name,email,status,created_at,birthday,role,age,verified,notes,prefs";
  const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
  const PREF_KEYS = ["theme", "language", "newsletter", "pageSize", "timezone", "density", "tags"];
  const share = (test: (r: WideUserRecord) => boolean): number => rows.filter(test).length / n;

  test("is deterministic for count, seed and startId, and differs across seeds", () => {
    const a = [...generateUsers({ count: 3000, seed: 42, startId: 7, wide: true })];
    const b = [...generateUsers({ count: 3000, seed: 42, startId: 7, wide: true })];
    expect(b).toEqual(a);
    const c = [...generateUsers({ count: 3000, seed: 43, startId: 7, wide: true })];
    let same = 0;
    for (let i = 0; i < a.length; i++) if (a[i].created_at === c[i].created_at) same++;
    expect(same).toBeLessThan(10);
  });

  test("the first four fields are the non-wide generator's, then the seven in order", () => {
    for (const options of [{ count: n, seed: 2024 }, { count: 500, seed: 5, startId: 1000 }]) {
      const plain = [...generateUsers(options)];
      const wide = options.count === n ? rows : [...generateUsers({ ...options, wide: true })];
      expect(wide.length).toBe(plain.length);
      for (let i = 0; i < plain.length; i++) {
        const { id, name, email, status } = wide[i];
        if (id !== plain[i].id || name !== plain[i].name || email !== plain[i].email || status !== plain[i].status) {
          throw new Error(`row ${i}: ${JSON.stringify(wide[i])} vs ${JSON.stringify(plain[i])}`);
        }
        expect(Object.keys(wide[i])).toEqual(["id", "name", "email", "status", ...WIDE_COLUMNS]);
      }
    }
  });

  test("golden: the wide fields of seed 1 stay the same", () => {
    // Pinned output: a change here changes every generated wide dataset.
    const [first, second, third] = [...generateUsers({ count: 3, seed: 1, wide: true })];
    expect(first).toMatchObject({ id: 1, name: "Rieke Kleinert", created_at: "2018-04-10T20:14:32.804Z", birthday: "1951-07-17", role: "member", age: 73, verified: true });
    expect(first.notes?.startsWith("Long-standing customer since the first public release.")).toBe(true);
    expect(first.prefs).toEqual({ theme: "system", language: "de", density: "compact", tags: ["beta", "edu", "partner"] });
    expect(second).toEqual({
      id: 2, name: "Ilaçın Bilen", email: "Ilacin.2@hotmail.com", status: "inactive",
      created_at: "2022-04-30T17:24:15.413Z", birthday: "1970-09-15", role: "member", age: 54, verified: true,
      notes: null, prefs: { theme: "dark", language: "es", newsletter: false, pageSize: 50 },
    });
    expect(third).toMatchObject({ created_at: "2025-01-28T15:15:49.439Z", birthday: "1974-11-18", role: "viewer", age: 50, notes: null, prefs: { theme: "dark", newsletter: true } });
  });

  test("every value has its column's syntax", () => {
    const first = Date.UTC(2015, 0, 1);
    const last = Date.UTC(2025, 11, 31, 23, 59, 59, 999);
    for (const r of rows) {
      const where = `row ${r.id}: ${JSON.stringify(r)}`;
      if (typeof r.created_at !== "string" || !ISO.test(r.created_at)) throw new Error(`created_at, ${where}`);
      const ms = Date.parse(r.created_at);
      if (new Date(ms).toISOString() !== r.created_at || ms < first || ms > last) throw new Error(`created_at, ${where}`);
      if (r.birthday === null) {
        if (r.age !== null) throw new Error(`age without birthday, ${where}`);
      } else {
        // A real calendar day: it survives a round trip through Date.
        if (!/^\d{4}-\d{2}-\d{2}$/.test(r.birthday) || new Date(`${r.birthday}T00:00:00Z`).toISOString().slice(0, 10) !== r.birthday) {
          throw new Error(`birthday, ${where}`);
        }
        if (!Number.isInteger(r.age) || r.age !== ageOn20250101(r.birthday) || r.age < 16 || r.age > 90) throw new Error(`age, ${where}`);
      }
      if (!(ROLE_VALUES as readonly string[]).includes(r.role)) throw new Error(`role, ${where}`);
      if (typeof r.verified !== "boolean") throw new Error(`verified, ${where}`);
      if (r.notes !== null && typeof r.notes !== "string") throw new Error(`notes, ${where}`);
      if (r.prefs !== null) {
        if (typeof r.prefs !== "object" || Array.isArray(r.prefs)) throw new Error(`prefs, ${where}`);
        const keys = Object.keys(r.prefs);
        if (keys.length < 2 || keys.length > 4 || keys.some((k) => !PREF_KEYS.includes(k))) throw new Error(`prefs keys, ${where}`);
        for (const v of Object.values(r.prefs)) {
          const ok = ["string", "boolean", "number"].includes(typeof v) || (Array.isArray(v) && v.length > 0 && v.every((t) => typeof t === "string"));
          if (!ok) throw new Error(`prefs value, ${where}`);
        }
      }
    }
  });

  test("null rates and value mixes are as specified over 10,000 rows", () => {
    const birthdayNull = share((r) => r.birthday === null);
    expect(birthdayNull).toBeGreaterThan(0.045);
    expect(birthdayNull).toBeLessThan(0.075);
    expect(share((r) => (r.age === null) !== (r.birthday === null))).toBe(0);
    const notesNull = share((r) => r.notes === null);
    expect(notesNull).toBeGreaterThan(0.57);
    expect(notesNull).toBeLessThan(0.63);
    const notesEmpty = share((r) => r.notes === "");
    expect(notesEmpty).toBeGreaterThan(0.035);
    expect(notesEmpty).toBeLessThan(0.065);
    const prefsNull = share((r) => r.prefs === null);
    expect(prefsNull).toBeGreaterThan(0.08);
    expect(prefsNull).toBeLessThan(0.12);
    const verified = share((r) => r.verified);
    expect(verified).toBeGreaterThan(0.77);
    expect(verified).toBeLessThan(0.83);
    expect(share((r) => r.created_at === null || r.role === null)).toBe(0);
    // Members most, owners fewest.
    const roles = ROLE_VALUES.map((role) => share((r) => r.role === role));
    const [owner, admin, member, viewer] = roles;
    expect(member).toBeGreaterThan(0.6);
    expect(viewer).toBeGreaterThan(admin);
    expect(admin).toBeGreaterThan(owner);
    expect(owner).toBeGreaterThan(0.005);
    expect(owner).toBeLessThan(0.05);
    // Ages: most between 25 and 44, some teenagers and some over 75.
    const aged = rows.filter((r) => r.age !== null) as (WideUserRecord & { age: number })[];
    expect(aged.filter((r) => r.age >= 25 && r.age < 45).length / aged.length).toBeGreaterThan(0.4);
    expect(aged.some((r) => r.age < 20)).toBe(true);
    expect(aged.some((r) => r.age > 75)).toBe(true);
    // Notes exercise CSV quoting and Unicode: commas, quotes, a newline, accents, Cyrillic, long texts.
    const notes = rows.map((r) => r.notes).filter((t): t is string => typeof t === "string" && t !== "");
    for (const re of [/,/, /"/, /\n/, /[\u00C0-\u024F]/, /[\u0400-\u04FF]/]) expect(notes.some((t) => re.test(t))).toBe(true);
    expect(Math.max(...notes.map((t) => t.length))).toBeLessThanOrEqual(520);
    expect(notes.filter((t) => t.length > 300).length).toBeGreaterThan(0);
    expect(rows.some((r) => Array.isArray(r.prefs?.tags))).toBe(true);
  });

  test("created_at rises roughly with id, but sorting by it is not id order", () => {
    const times = rows.map((r) => Date.parse(r.created_at));
    const byTime = rows.map((_, i) => i).sort((a, b) => times[a] - times[b] || a - b);
    let moved = 0;
    for (let i = 0; i < n; i++) if (byTime[i] !== i) moved++;
    expect(moved).toBeGreaterThan(n / 2);
    // The first tenth of the ids signed up years before the last tenth, on average.
    const mean = (from: number, to: number) => times.slice(from, to).reduce((a, b) => a + b, 0) / (to - from);
    expect(mean(n - n / 10, n) - mean(0, n / 10)).toBeGreaterThan(5 * 365 * 86_400_000);
    expect(rows.some((r) => r.created_at.startsWith("2015-"))).toBe(true);
    expect(rows.some((r) => r.created_at.startsWith("2025-"))).toBe(true);
  });

  test("writes NDJSON, a JSON array and CSV that read back to the same records", async () => {
    const count = 3000;
    const expected = [...generateUsers({ count, seed: 77, wide: true })];
    const text: Record<string, string> = {};
    for (const format of ["ndjson", "json", "csv"] as const) {
      const path = join(dir, `wide.${format}`);
      await writeUsers(path, { count, seed: 77, format, wide: true });
      text[format] = readFileSync(path, "utf8");
    }
    // NDJSON: each line is exactly JSON.stringify of the record.
    const lines = text.ndjson.split("\n");
    expect(lines.length).toBe(count + 1);
    expect(lines[count]).toBe("");
    for (let i = 0; i < count; i++) if (lines[i] !== JSON.stringify(expected[i])) throw new Error(`line ${i + 1}: ${lines[i]}`);
    expect(JSON.parse(text.json)).toEqual(expected);
    expect(text.json.split("\n")[1]).toBe(`${lines[0]},`);
    // CSV: the header, CRLF line ends, and the same values as the NDJSON.
    expect(text.csv.startsWith(`${HEADER}\r\n`)).toBe(true);
    const records = parseCsv(text.csv);
    expect(records[0].map((c) => c.text).join(",")).toBe(HEADER);
    expect(records.length).toBe(count + 1);
    const fromNdjson = lines.slice(0, count).map((l) => JSON.parse(l));
    for (let i = 0; i < count; i++) {
      if (records[i + 1].length !== 11) throw new Error(`CSV record ${i + 1} has ${records[i + 1].length} fields`);
      expect(wideFromCsv(records[i + 1])).toEqual(fromNdjson[i]);
    }
    // The empty string is a quoted empty field, null an empty one.
    expect(expected.some((r) => r.notes === "")).toBe(true);
    expect(text.csv).toMatch(/,"",/);
  });

  test("the same options write byte-identical files", async () => {
    for (const format of ["ndjson", "csv"] as const) {
      const a = join(dir, `wide-a.${format}`);
      const b = join(dir, `wide-b.${format}`);
      await writeUsers(a, { count: 2000, seed: 9, format, wide: true });
      await writeUsers(b, { count: 2000, seed: 9, format, wide: true });
      expect(readFileSync(a).equals(readFileSync(b))).toBe(true);
    }
  });

  test("count 0 writes an empty file, the CSV header alone", async () => {
    expect([...generateUsers({ count: 0, seed: 1, wide: true })]).toEqual([]);
    const path = join(dir, "wide-empty.csv");
    await writeUsers(path, { count: 0, seed: 1, format: "csv", wide: true });
    expect(readFileSync(path, "utf8")).toBe(`${HEADER}\r\n`);
  });
});

describe("writeRecords with added columns", () => {
  const records = [
    { id: 1, name: "a", email: "a@x.org", status: "active", n: 1.5, b: false, s: 'say "hi", then\nleave', o: { k: ["é", 2] } },
    { id: 2, name: "b", email: "b@x.org", status: "inactive", n: null, s: "", o: [] },
  ] as unknown as UserRecord[];

  test("writes each column's value, null and a missing field alike", async () => {
    const path = join(dir, "extra");
    await writeRecords(`${path}.ndjson`, records, "ndjson", undefined, ["n", "b", "s", "o"]);
    expect(readFileSync(`${path}.ndjson`, "utf8")).toBe(
      '{"id":1,"name":"a","email":"a@x.org","status":"active","n":1.5,"b":false,"s":"say \\"hi\\", then\\nleave","o":{"k":["é",2]}}\n' +
        '{"id":2,"name":"b","email":"b@x.org","status":"inactive","n":null,"b":null,"s":"","o":[]}\n',
    );
    await writeRecords(`${path}.csv`, records, "csv", undefined, ["n", "b", "s", "o"]);
    expect(readFileSync(`${path}.csv`, "utf8")).toBe(
      'id,name,email,status,n,b,s,o\r\n1,a,a@x.org,active,1.5,false,"say ""hi"", then\nleave","{""k"":[""é"",2]}"\r\n2,b,b@x.org,inactive,,,"",[]\r\n',
    );
  });

  test("a non-finite number or a value JSON cannot hold rejects and leaves no file", async () => {
    for (const [value, format] of [[Number.NaN, "ndjson"], [Number.POSITIVE_INFINITY, "csv"], [10n, "json"], [() => 1, "csv"]] as const) {
      const path = join(dir, `bad-extra.${format}`);
      const bad = [{ id: 1, name: "a", email: "e", status: "active", x: value }] as unknown as UserRecord[];
      await expect(writeRecords(path, bad, format, undefined, ["x"])).rejects.toThrow(TypeError);
      expect(existsSync(path)).toBe(false);
    }
  });
});
