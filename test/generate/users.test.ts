import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { csvField, generateUsers, writeRecords, writeUsers } from "../../src/generate/users.ts";
import type { UserRecord } from "../../src/schema.ts";

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
