import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { buildSnapshotFromGenerator } from "../../src/generate/snapshot.ts";
import { SnapshotError } from "../../src/snapshot/load.ts";
import { defaultCacheDir, defaultLocationDir, loadPrivately, preparePrivateCopy, pruneCache, readSnapshotId } from "../../src/snapshot/private-copy.ts";
import { recordAt } from "../../src/store/rows-json.ts";
import { createFileThreads } from "../../src/io/threads.ts";

let dir: string;
let one: string;
let two: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "private-copy-"));
  one = join(dir, "one.snap");
  two = join(dir, "two.snap");
  buildSnapshotFromGenerator({ count: 3_000, seed: 1 }, one);
  buildSnapshotFromGenerator({ count: 2_000, seed: 2 }, two);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("private copies", () => {
  test("the copy is named by the snapshot id, holds the same bytes, and is reused", () => {
    const cache = join(dir, "cache-a");
    const id = readSnapshotId(one);
    const first = preparePrivateCopy(one, cache);
    expect(first).toMatchObject({ path: join(cache, `${id}.snap`), snapshotId: id, how: "copied", bytes: statSync(one).size });
    expect(readFileSync(first.path).equals(readFileSync(one))).toBe(true);
    const copiedAt = statSync(first.path).mtimeMs;
    expect(preparePrivateCopy(one, cache)).toMatchObject({ path: first.path, snapshotId: id, how: "reused" });
    expect(statSync(first.path).mtimeMs).toBe(copiedAt);
  });

  test("whatever happens to the source afterwards, the loaded store reads the version it loaded", () => {
    const served = join(dir, "served.snap");
    copyFileSync(one, served);
    const loaded = loadPrivately(served, { cacheDir: join(dir, "cache-b") });
    const before = Array.from({ length: loaded.store.rowCount }, (_, row) => recordAt(loaded.store, row));
    // truncated in place, then overwritten in place by another snapshot (`cp two served`)
    truncateSync(served, 0);
    expect(before).toEqual(Array.from({ length: loaded.store.rowCount }, (_, row) => recordAt(loaded.store, row)));
    writeFileSync(served, readFileSync(two));
    expect(before).toEqual(Array.from({ length: loaded.store.rowCount }, (_, row) => recordAt(loaded.store, row)));
    expect(loaded.store.rowCount).toBe(3_000);
    // the next load takes the new version, in a copy of its own
    const next = loadPrivately(served, { cacheDir: join(dir, "cache-b") });
    expect(next.store.rowCount).toBe(2_000);
    expect(next.privatePath).not.toBe(loaded.privatePath);
  });

  test("the default cache directory is beside the snapshot", () => {
    expect(defaultCacheDir("/srv/data/users.snap")).toBe("/srv/data/.snapshot-cache");
  });

  test("a replica's and a publisher's default directories are in the user's cache directory, one per location", () => {
    const env = { XDG_CACHE_HOME: "/var/cache/u" };
    expect(defaultLocationDir("replica", "s3://snapshots/users", env)).toBe("/var/cache/u/users-listing/replica/s3-snapshots-users-7cf3d208da96");
    expect(defaultLocationDir("follow", "s3://snapshots/users", env)).toBe("/var/cache/u/users-listing/follow/s3-snapshots-users-7cf3d208da96");
    // a directory by its absolute path: the same from anywhere
    expect(defaultLocationDir("replica", "published", env)).toBe(defaultLocationDir("replica", join(process.cwd(), "published"), env));
    expect(defaultLocationDir("replica", "/a/b", env)).not.toBe(defaultLocationDir("replica", "/a-b", env));
    // the last 48 characters of a long location, and the digest of all of it
    const long = `s3://bucket/${"p".repeat(100)}`;
    expect(defaultLocationDir("replica", long, env).split("/").pop()).toMatch(/^p{48}-[0-9a-f]{12}$/);
    expect(defaultLocationDir("replica", "/", env)).toMatch(/^\/var\/cache\/u\/users-listing\/replica\/[0-9a-f]{12}$/);
    // XDG_CACHE_HOME unset or relative: ~/.cache (XDG Base Directory Specification)
    expect(defaultLocationDir("replica", "s3://x/y", {})).toStartWith(join(homedir(), ".cache", "users-listing", "replica"));
    expect(defaultLocationDir("replica", "s3://x/y", { XDG_CACHE_HOME: "relative" })).toStartWith(join(homedir(), ".cache"));
  });

  test("a source whose sections fail their checksums is refused by name, and its temporary copy removed", () => {
    const bad = join(dir, "bad.snap");
    const bytes = readFileSync(one);
    bytes[bytes.length - 9] ^= 0xff;
    writeFileSync(bad, bytes);
    const cache = join(dir, "cache-c");
    expect(() => loadPrivately(bad, { cacheDir: cache })).toThrow(SnapshotError);
    expect(() => loadPrivately(bad, { cacheDir: cache })).toThrow(/bad\.snap: corrupt: section .* fails its checksum/);
    expect(readdirSync(cache)).toEqual([]);
  });

  test("a source that is not a snapshot is refused before anything is copied", () => {
    const junk = join(dir, "junk.snap");
    writeFileSync(junk, "not a snapshot at all");
    expect(() => preparePrivateCopy(junk, join(dir, "cache-d"))).toThrow(/junk\.snap: not a snapshot: bad magic/);
    expect(existsSync(join(dir, "cache-d"))).toBe(false);
  });

  test("processes copying one snapshot into one cache at once (a server's workers) leave a record that names the copy in place: it is reused", async () => {
    const cache = join(dir, "cache-race");
    const module = join(import.meta.dir, "../../src/snapshot/private-copy.ts");
    // each child imports the module, says it is ready, and copies once it reads a line
    const child = `import { preparePrivateCopy } from ${JSON.stringify(module)};
      process.stdout.write("ready\\n");
      for await (const _ of console) { preparePrivateCopy(${JSON.stringify(one)}, ${JSON.stringify(cache)}); process.stdout.write("done\\n"); break; }`;
    const line = async (reader: ReadableStreamDefaultReader<Uint8Array>, want: string) => {
      let text = "";
      while (!text.includes(want)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the child ended before "${want}": ${text}`);
        text += new TextDecoder().decode(value);
      }
    };
    for (let round = 0; round < 12; round++) {
      rmSync(cache, { recursive: true, force: true });
      const children = Array.from({ length: 3 }, () => Bun.spawn([process.execPath, "-e", child], { stdin: "pipe", stdout: "pipe", stderr: "inherit" }));
      try {
        const readers = children.map((c) => c.stdout.getReader());
        await Promise.all(readers.map((r) => line(r, "ready")));
        for (const c of children) c.stdin.write("go\n");
        for (const c of children) await c.stdin.flush();
        await Promise.all(readers.map((r) => line(r, "done")));
        expect(await Promise.all(children.map((c) => c.exited))).toEqual([0, 0, 0]);
      } finally {
        for (const c of children) c.kill();
        await Promise.all(children.map((c) => c.exited));
      }
      expect(preparePrivateCopy(one, cache).how).toBe("reused");
    }
  }, 120_000);

  test("pruning removes other versions and dead copies' temporary files, keeps what is asked, and leaves a copy still mapped until it is released", async () => {
    const cache = join(dir, "cache-e");
    // prepared on an I/O thread, as the server does: its verification's mapping is released there
    const threads = createFileThreads();
    const prepare = (source: string) => threads.run({ kind: "prepare", source, cacheDir: cache, verify: true, owned: false, fallback: false }, { timeoutMs: 30_000, label: "preparing" });
    const a = (await prepare(one)).path;
    const b = (await prepare(two)).path;
    threads.close();
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    writeFileSync(join(cache, `.${"0".repeat(16)}.${dead.pid}.1.tmp`), "x");
    writeFileSync(join(cache, `.${"1".repeat(16)}.${process.ppid}.1.tmp`), "x");
    writeFileSync(join(cache, "notes.txt"), "an operator's file is left alone");
    const name = (path: string) => path.slice(cache.length + 1);
    // a copy a process still maps is left, and removed by a later prune once it is released
    const holder = Bun.spawn([process.execPath, "-e", `const m = Bun.mmap(${JSON.stringify(a)}); console.log(m.length); await Bun.stdin.text();`], { stdin: "pipe", stdout: "pipe" });
    try {
      const reader = holder.stdout.getReader();
      expect(Number(new TextDecoder().decode((await reader.read()).value))).toBe(statSync(a).size);
      expect(pruneCache(cache, [b])).toEqual({ removed: [`.${"0".repeat(16)}.${dead.pid}.1.tmp`], inUse: [name(a)] });
      holder.stdin.end();
      await holder.exited;
    } finally {
      holder.kill("SIGKILL");
      await holder.exited;
    }
    expect(pruneCache(cache, [b])).toEqual({ removed: [name(a), `${name(a)}.verified`], inUse: [] });
    expect(readdirSync(cache).sort()).toEqual([`.${"1".repeat(16)}.${process.ppid}.1.tmp`, name(b), `${name(b)}.verified`, "notes.txt"].sort());
  });
});
