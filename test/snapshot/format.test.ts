import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { IngestError } from "../../src/ingest/read.ts";
import type { UserRecord } from "../../src/generate/record.ts";
import { buildSnapshotFromFile } from "../../src/snapshot/build-file.ts";
import { MAGIC, PREFIX_BYTES, headerPackr } from "../../src/snapshot/format.ts";
import { MAX_WINDOW_BYTES, SnapshotError, loadSnapshot, planWindows } from "../../src/snapshot/load.ts";
import { buildRecords } from "../../src/store/records.ts";
import { packJsonLiterals, packStrings } from "../../src/bits/byte-column.ts";
import { removePendingTemporaryFiles, removeStaleTemporaryFiles, writeSnapshot, writeSnapshotAsync } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";
import { recordAt, rowsToJson } from "../../src/store/rows-json.ts";
import { gramKey, listRows, trigramKey } from "../../src/bits/trigrams.ts";

const GOLDEN = join(import.meta.dir, "../fixtures/golden-v8.snap");
const CREATED_AT = "2026-01-01T00:00:00.000Z";
const RECORDS: UserRecord[] = [
  { id: 3, name: "Émile", email: "emile.21@x.fr", status: "active" },
  { id: 1, name: "bob", email: "bob.111@x.com", status: "inactive" },
  { id: -2, name: "Alice", email: "alice.21@x.com", status: "active" },
  { id: 10, name: "alice", email: "alice.111@x.com", status: "inactive" },
  { id: 7, name: "Иван", email: "ivan@x.ru", status: "active" },
];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "snap-test-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeFixture(name = "s.snap"): string {
  const path = join(dir, name);
  writeSnapshot(path, buildStoreFromRecords(RECORDS), { createdAt: CREATED_AT });
  return path;
}

describe("snapshot format v8", () => {
  test("is byte-for-byte the golden file", () => {
    const path = writeFixture();
    const bytes = readFileSync(path);
    if (process.env.UPDATE_GOLDEN === "1") writeFileSync(GOLDEN, bytes);
    expect(Buffer.compare(bytes, readFileSync(GOLDEN))).toBe(0);
  });

  test("golden file loads to the literal store", () => {
    const { store, header } = loadSnapshot(GOLDEN);
    expect(header.formatVersion).toBe(8);
    expect(header.rowCount).toBe(5);
    expect(header.createdAt).toBe(CREATED_AT);
    expect(header.schema).toEqual({
      columns: [
        { id: "id", kind: "number" },
        { id: "name", kind: "text" },
        { id: "email", kind: "text" },
        { id: "status", kind: "enum", values: ["active", "inactive"] },
      ],
      key: "id",
      partition: "status",
    });
    expect(header.sections.map((s) => s.name).slice(0, 6)).toEqual(["recordOffsets", "records.0", "bodyScratch", "partition.codes", "partition.counts", "col.id.distinct"]);
    const column = (id: string) => store.columns.get(id)!;
    // Rows are in key order: -2, 1, 3, 7, 10; the key keeps its values alone (its order is the rows').
    expect(Array.from(column("id").distinct!)).toEqual([-2, 1, 3, 7, 10]);
    expect(column("id").rowsByValue).toBeNull();
    // |id| order: 1, -2, 3, 7, 10 → rows 1, 0, 2, 3, 4.
    expect(Array.from(column("id").rowsByAbsValue!)).toEqual([1, 0, 2, 3, 4]);
    // The partition: status's ranks (0 null, 1 active, 2 inactive) and the rows of each.
    expect(Array.from(store.partition!.codes)).toEqual([1, 2, 1, 1, 2]);
    expect(Array.from(store.partition!.counts)).toEqual([0, 3, 2]);
    expect(Array.from(column("status").rowsByValue!)).toEqual([0, 2, 3, 1, 4]);
    // Names: Alice(-2) = alice(10) < bob(1) < Émile(3) < Иван(7); ties by key; ranks from 1 (0 is null).
    expect(Array.from(column("name").rowsByValue!)).toEqual([0, 4, 1, 2, 3]);
    expect(Array.from(column("name").rankByRow!)).toEqual([1, 2, 3, 4, 1]);
    expect(Array.from(column("name").rowsByValueByPartition!)).toEqual([0, 2, 3, 4, 1]);
    // Emails: alice.21 < alice.111 (numeric) < bob.111 < emile.21 < ivan.
    expect(Array.from(column("email").rowsByValue!)).toEqual([0, 4, 1, 2, 3]);
    expect(recordAt(store, 2) as unknown).toEqual({ id: 3, name: "Émile", email: "emile.21@x.fr", status: "active" });
    // Records: each row's JSON.stringify, back to back in row order; the scratch area is zeros.
    const byId = [...RECORDS].sort((a, b) => a.id - b.id);
    expect(new TextDecoder().decode(store.records.chunks[0])).toBe(byId.map((r) => JSON.stringify(r)).join(""));
    expect(Array.from(store.records.offsets).slice(1)).toEqual(byId.map((_, i) => new TextEncoder().encode(byId.slice(0, i + 1).map((r) => JSON.stringify(r)).join("")).length));
    expect(store.records.scratch.length).toBeGreaterThan(store.records.chunks[0].length);
    expect(store.records.scratch.every((b) => b === 0)).toBe(true);
    expect(new TextDecoder().decode(column("name").folded!)).toBe("alicebobemileиванalice");
    // Character trigrams: ali lic ice bob emi mil ile ива ван; "ива" is row 3's alone.
    const trigrams = column("name").trigrams!;
    expect(trigrams.keys.length).toBe(9);
    const iva = trigrams.keys.indexOf(trigramKey(0x438, 0x432, 0x430));
    expect(iva).toBeGreaterThanOrEqual(0);
    expect(Array.from(listRows(trigrams, iva, 5))).toEqual([3]);
    // grouped by the partition's 3 codes: row 3 is active (code 1)
    expect(Array.from(trigrams.groupCounts.subarray(iva * 3, iva * 3 + 3))).toEqual([0, 1, 0]);
    // the key's decimal forms are indexed too: "-2" has no trigram, "10" neither; nothing of 3 characters
    expect(column("id").trigrams!.keys.length).toBe(0);
    expect(store.searchable.map((c) => c.spec.id)).toEqual(["id", "name", "email", "status"]);
    // The search index: n-grams of each row's id, name and email (not status: an enum is decided per value).
    const [uni, bi, tri] = store.search.grams;
    const rowsOf = (index: typeof uni, cps: string) => {
      const k = index.keys.indexOf(gramKey([...cps].map((c) => c.codePointAt(0) as number)));
      return k < 0 ? [] : Array.from(listRows(index, k, 5));
    };
    // "-2" (row 0) is the only value with "-"; "1" is in rows 1 (1, bob.111), 0 (alice.21), 2 (emile.21), 4 (10, alice.111)
    expect(rowsOf(uni, "-")).toEqual([0]);
    expect(rowsOf(uni, "1")).toEqual([0, 1, 2, 4]);
    expect(rowsOf(bi, "10")).toEqual([4]);
    expect(rowsOf(bi, "li")).toEqual([0, 4]);
    expect(rowsOf(bi, "il")).toEqual([2]);
    expect(rowsOf(bi, "ив")).toEqual([3]);
    expect(rowsOf(tri, "ali")).toEqual([0, 4]);
    expect(rowsOf(tri, ".21")).toEqual([0, 2]);
    // no n-gram spans two values: "-2" then "alice" in row 0 has no "2a"
    expect(rowsOf(bi, "2a")).toEqual([]);
    // each row once per n-gram; the lists grouped by the partition's 3 codes like a column's
    expect(uni.counts[uni.keys.indexOf(gramKey([0x61]))]).toBe(3);
    expect(uni.groupCounts.length).toBe(uni.keys.length * 3);
    // each covered column's own 1- and 2-gram lists (its 3-grams are its trigrams): "li" is in row
    // 0's and row 4's name (alice) alone, "1" in ids 1 and 10 and in e-mails bob.111, alice.21,
    // emile.21, alice.111; the key's "-" is in no e-mail
    expect([...store.search.columns.keys()]).toEqual(["id", "name", "email"]);
    const own = (id: string, n: 1 | 2) => (store.search.columns.get(id) as readonly [typeof uni, typeof uni])[n - 1];
    expect(rowsOf(own("name", 2), "li")).toEqual([0, 4]);
    expect(rowsOf(own("email", 2), "li")).toEqual([0, 4]);
    expect(rowsOf(own("id", 1), "1")).toEqual([1, 4]);
    expect(rowsOf(own("email", 1), "1")).toEqual([0, 1, 2, 4]);
    expect(rowsOf(own("id", 1), "-")).toEqual([0]);
    expect(rowsOf(own("email", 1), "-")).toEqual([]);
    expect(rowsOf(own("name", 2), "ив")).toEqual([3]);
    expect(own("name", 1).groupCounts.length).toBe(own("name", 1).keys.length * 3);
    const fields = ["keys", "counts", "groupCounts", "refs", "bitmaps", "gaps"];
    expect(header.sections.map((s) => s.name).slice(-54)).toEqual([
      ...[1, 2, 3].flatMap((n) => fields.map((f) => `search.${n}.${f}`)),
      ...["id", "name", "email"].flatMap((id) => [1, 2].flatMap((n) => fields.map((f) => `col.${id}.search.${n}.${f}`))),
    ]);
    expect(store.snapshotId).toBe(header.checksum);
  });
});

describe("refused files", () => {
  const expectRefused = (path: string, message: RegExp) => {
    expect(() => loadSnapshot(path)).toThrow(SnapshotError);
    expect(() => loadSnapshot(path)).toThrow(message);
  };

  test("a flipped byte in a section fails its checksum", () => {
    const path = writeFixture("flip.snap");
    const bytes = readFileSync(path);
    const { header } = loadSnapshot(path);
    const ids = header.sections.find((s) => s.name === "col.id.distinct")!;
    bytes[ids.offset + 3] ^= 0xff;
    writeFileSync(path, bytes);
    expectRefused(path, /section col.id.distinct fails its checksum/);
  });

  test("a flipped header byte fails the header CRC", () => {
    const path = writeFixture("header.snap");
    const bytes = readFileSync(path);
    bytes[PREFIX_BYTES + 5] ^= 0x01;
    writeFileSync(path, bytes);
    expectRefused(path, /header checksum mismatch/);
  });

  test("a truncated file is refused", () => {
    const path = writeFixture("trunc.snap");
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 100));
    expectRefused(path, /truncated: section .* ends at byte/);
    writeFileSync(path, bytes.subarray(0, 10));
    expectRefused(path, /shorter than the 16-byte prefix/);
  });

  test("another format version is refused with a rebuild hint", () => {
    const path = writeFixture("v9.snap");
    const bytes = readFileSync(path);
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    const length = view.getUint32(8, true);
    const header = headerPackr.unpack(bytes.subarray(PREFIX_BYTES, PREFIX_BYTES + length));
    header.formatVersion = 9;
    const encoded = headerPackr.pack(header);
    // Same length: only one small integer changed.
    expect(encoded.length).toBe(length);
    bytes.set(encoded, PREFIX_BYTES);
    view.setUint32(12, Bun.hash.crc32(encoded), true);
    writeFileSync(path, bytes);
    expectRefused(path, /format version 9 is not supported \(this build reads version 8\); rebuild/);
    // Files of older builds: literal columns (2), the seed's four hard-wired (3), no trigram lists
    // (4), the seed's four as a second engine beside the other columns (5), no search index (6),
    // a search index across columns only (7).
    for (const version of [2, 3, 4, 5, 6, 7]) {
      expectRefused(join(import.meta.dir, `../fixtures/golden-v${version}.snap`), new RegExp(`format version ${version} is not supported \\(this build reads version 8\\); rebuild`));
    }
  });

  test("not a snapshot, empty, or missing", () => {
    const path = join(dir, "text.snap");
    writeFileSync(path, "hello, this is not a snapshot file at all");
    expectRefused(path, /bad magic/);
    writeFileSync(path, "");
    expectRefused(path, /cannot map the file/);
    expectRefused(join(dir, "missing.snap"), /cannot map the file/);
    expect(MAGIC.length).toBe(8);
  });
});

describe("snapshot build from a data file", () => {
  test("a bad record names file and line and leaves the previous snapshot intact", async () => {
    const output = join(dir, "keep.snap");
    const good = join(dir, "good.ndjson");
    writeFileSync(good, `${RECORDS.map((r) => JSON.stringify(r)).join("\n")}\n`);
    await buildSnapshotFromFile(good, output);
    const before = readFileSync(output);
    const bad = join(dir, "bad.ndjson");
    writeFileSync(bad, `${JSON.stringify(RECORDS[0])}\n${JSON.stringify(RECORDS[1])}\n{"id":5,"name":"x","email":"y","status":"active","first name":"x"}\n`);
    const error = await buildSnapshotFromFile(bad, output).catch((e) => e);
    expect(error).toBeInstanceOf(IngestError);
    expect(error.message).toStartWith(`${bad}:3: `);
    expect(error.message).toContain("first name");
    expect(Buffer.compare(readFileSync(output), before)).toBe(0);
    expect(loadSnapshot(output).store.rowCount).toBe(5);
  });

  test("a duplicate id in CSV names the later line", async () => {
    const csv = join(dir, "dup.csv");
    writeFileSync(csv, "id,name,email,status\n1,a,a@x,active\n2,b,b@x,active\n1,c,c@x,inactive\n");
    const error = await buildSnapshotFromFile(csv, join(dir, "dup.snap")).catch((e) => e);
    expect(error).toBeInstanceOf(IngestError);
    expect(error.message).toStartWith(`${csv}:4: `);
    expect(error.message).toBe(`${csv}:4: duplicate key 1 (first seen on line 2)`);
  });

  test("builds from CSV and a JSON array to the same rows", async () => {
    const csv = join(dir, "ok.csv");
    writeFileSync(csv, `id,name,email,status\n${RECORDS.map((r) => `${r.id},"${r.name}",${r.email},${r.status}`).join("\n")}\n`);
    const json = join(dir, "ok.json");
    writeFileSync(json, JSON.stringify(RECORDS));
    await buildSnapshotFromFile(csv, join(dir, "csv.snap"));
    await buildSnapshotFromFile(json, join(dir, "json.snap"));
    const a = loadSnapshot(join(dir, "csv.snap")).store;
    const b = loadSnapshot(join(dir, "json.snap")).store;
    const rows = (s: typeof a) => Array.from({ length: s.rowCount }, (_, r) => recordAt(s, r));
    expect(rows(a)).toEqual(rows(b));
    expect(rows(a).map((r) => r.id)).toEqual([-2, 1, 3, 7, 10]);
  });
});

describe("parallel build", () => {
  for (const order of ["reversed", "ascending"] as const) {
    test(`the worker-built store equals the single-thread one (ids ${order})`, async () => {
      const { buildStore, buildStoreParallel } = await import("../../src/store/build.ts");
      const { tableOfObjects } = await import("../../src/snapshot/objects.ts");
      const { generateUsers } = await import("../../src/generate/users.ts");
      const { USER_COLUMN_SPECS } = await import("../../src/generate/record.ts");
      const users = Array.from(generateUsers({ count: 3000, seed: 5, wide: true }));
      if (order === "reversed") users.reverse();
      const { WIDE_COLUMN_SPECS } = await import("../../src/generate/wide.ts");
      // A fresh input per build: a build takes its input over (the parallel one detaches the columns' arrays).
      const input = () => tableOfObjects(users as never, { key: "id", columns: [...USER_COLUMN_SPECS, ...WIDE_COLUMN_SPECS] });
      const a = buildStore(input());
      // workers whatever the row count
      const b = await buildStoreParallel(input(), undefined, 0);
      const pa = join(dir, "seq.snap");
      const pb = join(dir, "par.snap");
      writeSnapshot(pa, a, { createdAt: CREATED_AT });
      writeSnapshot(pb, b, { createdAt: CREATED_AT });
      expect(Buffer.compare(readFileSync(pa), readFileSync(pb))).toBe(0);
      expect(Array.from(a.columns.get("id")!.distinct!.subarray(0, 3))).toEqual([1, 2, 3]);
    });
  }
});

describe("snapshot build refuses what it cannot build exactly", () => {
  const snapshotOf = (name: string) => {
    const output = join(dir, name);
    writeFileSync(join(dir, "seed.ndjson"), `${RECORDS.map((r) => JSON.stringify(r)).join("\n")}\n`);
    return buildSnapshotFromFile(join(dir, "seed.ndjson"), output).then(() => output);
  };

  test("an input without records: empty, blank, [] or a CSV header alone, on line 1", async () => {
    const output = await snapshotOf("empty-keep.snap");
    const before = readFileSync(output);
    const inputs: Array<[string, string]> = [
      ["ndjson", ""],
      ["ndjson", "  \n\n"],
      ["ndjson", "\uFEFF"],
      ["json", "[]"],
      ["json", " [ \n ]\n"],
      ["csv", "id,name,email,status\n"],
      ["csv", "id,name,email,status\n\n\n"],
      ["txt", ""],
    ];
    let k = 0;
    for (const [ext, content] of inputs) {
      const input = join(dir, `empty${k++}.${ext}`);
      writeFileSync(input, content);
      const error = await buildSnapshotFromFile(input, output).catch((e) => e);
      expect(error).toBeInstanceOf(IngestError);
      expect(error.message).toBe(`${input}:1: no records (an empty table is built only with --allow-empty)`);
      expect(Buffer.compare(readFileSync(output), before)).toBe(0);
    }
  });

  test("ids 2^53 and 2^53 + 1: out of range, not a duplicate", async () => {
    const input = join(dir, "far.ndjson");
    writeFileSync(input, '{"id":9007199254740992,"name":"a","email":"b","status":"active"}\n{"id":9007199254740993,"name":"c","email":"d","status":"active"}\n');
    const error = await buildSnapshotFromFile(input, join(dir, "far.snap")).catch((e) => e);
    expect(error).toBeInstanceOf(IngestError);
    expect(error.message).toBe(`${input}:2: field "id": 9007199254740993 is beyond ±2^53 and would be rounded`);
  });

  test("a gzipped file with a format option, and its format reported", async () => {
    const input = join(dir, "users.data.gz");
    writeFileSync(input, Bun.gzipSync(new TextEncoder().encode(`id,name,email,status\n${RECORDS.map((r) => `${r.id},"${r.name}",${r.email},${r.status}`).join("\n")}\n`)));
    const formats: unknown[] = [];
    const report = await buildSnapshotFromFile(input, join(dir, "gz.snap"), undefined, { format: "csv", onFormat: (info) => formats.push(info) });
    expect(report.rows).toBe(5);
    expect(formats).toEqual([{ file: input, format: "csv", gzip: true }]);
    expect(Array.from(loadSnapshot(join(dir, "gz.snap")).store.columns.get("id")!.distinct!)).toEqual([-2, 1, 3, 7, 10]);
  });
});

describe("temporary files of interrupted writes", () => {
  /** The pid of a process that has exited (spawned and waited for). */
  const deadPid = async (): Promise<number> => {
    const child = Bun.spawn(["true"]);
    await child.exited;
    return child.pid;
  };

  for (const writer of ["writeSnapshot", "writeSnapshotAsync"] as const) {
    test(`${writer} removes a dead process's temporary file of the same target, and nothing else`, async () => {
      const sub = join(dir, `stale-${writer}`);
      mkdirSync(sub);
      const target = join(sub, "users.snap");
      const dead = await deadPid();
      // A running process: a child that sleeps until killed.
      const live = Bun.spawn(["sleep", "60"]);
      try {
        expect(() => process.kill(dead, 0)).toThrow();
        const stale = join(sub, `.users.snap.${dead}.1700000000000.tmp`);
        const ofLive = join(sub, `.users.snap.${live.pid}.1700000000001.tmp`);
        const ofThis = join(sub, `.users.snap.${process.pid}.1700000000002.tmp`);
        const otherTarget = join(sub, `.other.snap.${dead}.1700000000003.tmp`);
        const lookalike = join(sub, `.users.snap.${dead}.tmp`);
        const prefixOfName = join(sub, `.users.snap.old.${dead}.1700000000004.tmp`);
        for (const path of [stale, ofLive, ofThis, otherTarget, lookalike, prefixOfName]) writeFileSync(path, "partial");
        const store = buildStoreFromRecords(RECORDS);
        if (writer === "writeSnapshot") writeSnapshot(target, store, { createdAt: CREATED_AT });
        else await writeSnapshotAsync(target, store, { createdAt: CREATED_AT });
        expect(existsSync(stale)).toBe(false);
        for (const path of [ofLive, ofThis, otherTarget, lookalike, prefixOfName]) expect(existsSync(path)).toBe(true);
        expect(readdirSync(sub).sort()).toEqual([basename(ofLive), basename(ofThis), basename(otherTarget), basename(lookalike), basename(prefixOfName), "users.snap"].sort());
        expect(Buffer.compare(readFileSync(target), readFileSync(GOLDEN))).toBe(0);
        expect(removeStaleTemporaryFiles(target)).toEqual([]);
      } finally {
        live.kill();
        await live.exited;
      }
      // Once its process is gone, the live one's file is stale too.
      expect(removeStaleTemporaryFiles(target)).toEqual([join(sub, `.users.snap.${live.pid}.1700000000001.tmp`)]);
    });
  }

  test("the asynchronous writer writes the golden bytes and leaves no temporary file", async () => {
    const path = join(dir, "async.snap");
    const pending = writeSnapshotAsync(path, buildStoreFromRecords(RECORDS), { createdAt: CREATED_AT });
    await pending;
    expect(Buffer.compare(readFileSync(path), readFileSync(GOLDEN))).toBe(0);
    expect(removePendingTemporaryFiles()).toEqual([]);
    expect(readdirSync(dir).filter((name) => name.startsWith(".async.snap."))).toEqual([]);
  });
});

describe("large files (no 32-bit offset anywhere)", () => {
  test("windows of whole sections, offsets past 2^32 exact, a records chunk starting a window", () => {
    const G = 2 ** 30;
    const sections = [
      { name: "ids", offset: 4096, bytes: 800 * 2 ** 20 },
      { name: "recordOffsets", offset: 4096 + 800 * 2 ** 20, bytes: 400 * 2 ** 20 },
      { name: "records.0", offset: 1200 * 2 ** 20 + 4096, bytes: 3 * G + 8 },
      { name: "bodyScratch", offset: 4 * G + 176 * 2 ** 20 + 4104, bytes: 4 * 2 ** 20 },
      { name: "records.1", offset: 4 * G + 180 * 2 ** 20 + 4104, bytes: 2 * G },
      { name: "name.folded", offset: 6 * G + 180 * 2 ** 20 + 4104, bytes: G },
      { name: "col.notes.folded", offset: 7 * G + 180 * 2 ** 20 + 4104, bytes: 3 * G },
    ];
    const { windows, windowOf } = planWindows(sections);
    expect(windowOf).toEqual([0, 0, 1, 1, 2, 2, 3]);
    for (const w of windows) {
      expect(w.start % 4096).toBe(0);
      expect(w.end - w.start).toBeLessThanOrEqual(MAX_WINDOW_BYTES);
    }
    sections.forEach((s, i) => {
      const w = windows[windowOf[i]];
      expect(s.offset).toBeGreaterThanOrEqual(w.start);
      expect(s.offset + s.bytes).toBeLessThanOrEqual(w.end);
    });
    // the last section ends past 2^33, exactly
    expect(windows[3].end).toBe(10 * G + 180 * 2 ** 20 + 4104);
    expect(() => planWindows([{ name: "records.0", offset: 8, bytes: 2 ** 32 }])).toThrow(RangeError);
  });

  test("a store of several records chunks, mapped in several windows, loads to the same store", () => {
    const records: UserRecord[] = Array.from({ length: 300 }, (_, i) => ({ id: 1000 - i * 3, name: `Ñame ${i % 17}`, email: `e${i}@mail.test`, status: i % 5 ? "active" : "inactive" }));
    const store = buildStoreFromRecords(records);
    const literals = (values: string[]) => packJsonLiterals(packStrings(values.length, (i) => values[i]));
    const plain = (values: string[]) => packStrings(values.length, (i) => values[i]);
    const byId = [...records].sort((a, b) => a.id - b.id);
    const fields = [
      { id: "id", literals: plain(byId.map((r) => JSON.stringify(r.id))) },
      { id: "name", literals: literals(byId.map((r) => r.name)) },
      { id: "email", literals: literals(byId.map((r) => r.email)) },
      { id: "status", literals: plain(byId.map((r) => JSON.stringify(r.status))) },
    ];
    const chunked = { ...store, records: buildRecords(fields, 300, 1024, 4000) };
    expect(chunked.records.chunks.length).toBeGreaterThan(3);
    const path = join(dir, "chunked.snap");
    writeSnapshot(path, chunked, { createdAt: CREATED_AT });
    const loaded = loadSnapshot(path, { maxWindowBytes: 16384 });
    expect(loaded.bytes).toBeGreaterThan(16384);
    expect(loaded.header.sections.filter((s) => s.name.startsWith("records.")).length).toBe(chunked.records.chunks.length);
    expect(loaded.store.records.chunks.length).toBe(chunked.records.chunks.length);
    for (let row = 0; row < 300; row++) expect(recordAt(loaded.store, row) as unknown).toEqual(byId[row]);
    expect(new TextDecoder().decode(rowsToJson(loaded.store, Uint32Array.from([299, 0, 150])))).toBe(JSON.stringify([byId[299], byId[0], byId[150]]));
  });
});

