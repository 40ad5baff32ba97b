import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { ensureGeneratedSnapshot } from "../src/cli.ts";
import { writeUsers } from "../src/generate/users.ts";
import { FORMAT_VERSION } from "../src/snapshot/format.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { untilInDir } from "./support/watch-dir.ts";

const logger = pino({ level: "silent" });
const SPEC = { count: 500, seed: 7 };
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "cli-test-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the default data's snapshot", () => {
  test("is built when absent, kept when it loads", () => {
    const path = join(dir, "absent.snap");
    ensureGeneratedSnapshot(path, SPEC, logger);
    const first = loadSnapshot(path);
    expect(first.store.rowCount).toBe(500);
    const built = statSync(path).mtimeMs;
    ensureGeneratedSnapshot(path, SPEC, logger);
    expect(statSync(path).mtimeMs).toBe(built);
    expect(loadSnapshot(path).store.snapshotId).toBe(first.store.snapshotId);
  });

  test("is rebuilt when refused: an older format version, or not a snapshot", () => {
    const old = join(dir, "old.snap");
    copyFileSync(join(import.meta.dir, "fixtures/golden-v2.snap"), old);
    expect(() => loadSnapshot(old)).toThrow(/format version 2 is not supported/);
    ensureGeneratedSnapshot(old, SPEC, logger);
    const loaded = loadSnapshot(old);
    expect(loaded.header.formatVersion).toBe(FORMAT_VERSION);
    expect(loaded.store.rowCount).toBe(500);

    const junk = join(dir, "junk.snap");
    writeFileSync(junk, "not a snapshot");
    ensureGeneratedSnapshot(junk, SPEC, logger);
    expect(loadSnapshot(junk).store.rowCount).toBe(500);
    expect(existsSync(junk)).toBe(true);
  });
});

const CLI = join(import.meta.dir, "../src/cli.ts");

/** Runs the command line with `args` (and `input` on standard input); resolves when it exits. */
async function run(args: string[], input?: string | Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = typeof input === "object" ? { ...process.env, ...input } : process.env;
  const child = Bun.spawn([process.execPath, CLI, ...args], {
    env,
    stdin: typeof input === "string" ? new Blob([input]) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

const NDJSON = `${[3, 1, 2].map((id) => JSON.stringify({ id, name: `n${id}`, email: `e${id}@x.org`, status: "active" })).join("\n")}\n`;
const CSV = "id,name,email,status\n3,n3,e3@x.org,active\n1,n1,e1@x.org,inactive\n";

describe("the program", () => {
  test("--version prints package.json's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dir, "../package.json"), "utf8"));
    for (const flag of ["--version", "-V"]) {
      const r = await run([flag]);
      expect(r).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
    }
  });

  test("serve on a host this machine cannot listen on stops at once, naming the host and where it came from", async () => {
    const flag = await run(["serve", "--host", "999.1.1.1", "--port", "0", "--no-demo"]);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain('--host "999.1.1.1": this machine cannot listen there');
    const fromEnv = await run(["serve", "--port", "0", "--no-demo"], { HOST: "no-such-host.invalid" });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain('HOST "no-such-host.invalid": this machine cannot listen there');
  });
});

describe("snapshot build", () => {
  test("- reads standard input; the format comes from the content and is reported", async () => {
    const out = join(dir, "stdin.snap");
    const r = await run(["snapshot", "build", "-", "-o", out], NDJSON);
    expect(r.code).toBe(0);
    expect(r.stderr).toStartWith("reading <stdin> as NDJSON\n");
    expect(Array.from(loadSnapshot(out).store.columns.get("id")?.distinct ?? [])).toEqual([1, 2, 3]);
    const csv = await run(["snapshot", "build", "-", "-o", out], CSV);
    expect(csv.stderr).toStartWith("reading <stdin> as CSV\n");
    expect(Array.from(loadSnapshot(out).store.columns.get("id")?.distinct ?? [])).toEqual([1, 3]);
  });

  test("a .gz input is gunzipped, its format from the name before .gz; --format overrides", async () => {
    const gz = join(dir, "users.csv.gz");
    writeFileSync(gz, Bun.gzipSync(new TextEncoder().encode(CSV)));
    const out = join(dir, "gz.snap");
    const r = await run(["snapshot", "build", gz, "-o", out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toStartWith(`reading ${gz} as CSV (gzip)\n`);
    expect(loadSnapshot(out).store.rowCount).toBe(2);
    // NDJSON in a file named .csv, and on standard input.
    const misnamed = join(dir, "misnamed.csv");
    writeFileSync(misnamed, NDJSON);
    const forced = await run(["snapshot", "build", misnamed, "--format", "ndjson", "-o", out]);
    expect(forced.stderr).toStartWith(`reading ${misnamed} as NDJSON\n`);
    expect(loadSnapshot(out).store.rowCount).toBe(3);
    const asJson = await run(["snapshot", "build", "-", "--format", "json", "-o", out], NDJSON);
    expect(asJson.code).toBe(1);
    expect(asJson.stderr).toContain(`error: <stdin>:1: malformed JSON: expected '['`);
    const unknown = await run(["snapshot", "build", "-", "--format", "xml", "-o", out], NDJSON);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("Allowed choices are ndjson, json, csv");
  });

  test("bad or empty standard input: <stdin>:line: reason, exit 1, the previous snapshot kept", async () => {
    const out = join(dir, "kept.snap");
    await run(["snapshot", "build", "-", "-o", out], NDJSON);
    const before = readFileSync(out);
    const bad = await run(["snapshot", "build", "-", "-o", out], `${CSV}4,n,e\n`);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toEndWith("error: <stdin>:4: CSV row has 3 fields, the header has 4\n");
    for (const empty of ["", "\n  \n", "[]", "id,name,email,status\n"]) {
      const r = await run(["snapshot", "build", "-", "-o", out], empty);
      expect(r.code).toBe(1);
      expect(r.stderr).toEndWith("error: <stdin>:1: no records (an empty table is built only with --allow-empty)\n");
    }
    expect(Buffer.compare(readFileSync(out), before)).toBe(0);
  });

  test("the output lists every column with its kind, the key, the fields left out and a warning per secret-like column", async () => {
    const out = join(dir, "secret.snap");
    const input = `${[3, 1, 2].map((id) => JSON.stringify({ id, name: `n${id}`, email: `e${id}@x.org`, status: "active", password_hash: `h${id}`, api_token: "t" })).join("\n")}\n`;
    const warned = await run(["snapshot", "build", "-", "-o", out], input);
    expect(warned.code).toBe(0);
    const lines = warned.stderr.split("\n");
    expect(lines.slice(0, 4)).toEqual([
      "reading <stdin> as NDJSON",
      "columns: id number (key), name text, email text, status text, password_hash text, api_token text",
      'warning: column "password_hash" looks like a secret (it holds "password") and will be served to every client; leave it out with --exclude password_hash',
      'warning: column "api_token" looks like a secret (it holds "token") and will be served to every client; leave it out with --exclude api_token',
    ]);
    const excluded = await run(["snapshot", "build", "-", "-o", out, "--exclude", "password_hash, api_token"], input);
    expect(excluded.code).toBe(0);
    expect(excluded.stderr.split("\n").slice(0, 3)).toEqual(["reading <stdin> as NDJSON", "columns: id number (key), name text, email text, status text", "excluded: password_hash, api_token"]);
    expect(loadSnapshot(out).store.schema.columns.map((c) => c.id)).toEqual(["id", "name", "email", "status"]);
    const typo = await run(["snapshot", "build", "-", "-o", out, "--exclude", "pasword_hash"], input);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toEndWith('error: --exclude "pasword_hash" is not a field of the input; fields: id, name, email, status, password_hash, api_token\n');
    const key = await run(["snapshot", "build", "-", "-o", out, "--exclude", "id"], input);
    expect(key.stderr).toEndWith('error: --exclude "id" names the key column; a table cannot be built without its key\n');
  });

  test("--key, --delimiter: a missing key is named, a semicolon CSV suggests its delimiter", async () => {
    const out = join(dir, "semi.snap");
    const semicolons = "id;name;email;status\n3;n3;e3@x.org;active\n1;Smith, John;e1@x.org;inactive\n";
    const plain = await run(["snapshot", "build", "-", "-o", out, "--format", "csv"], semicolons);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toEndWith('error: <stdin>:1: the CSV header has no field "id" (the key), read with the delimiter ",": its fields are "id;name;email;status"; split on ";" it has "id": give --delimiter \';\'\n');
    const told = await run(["snapshot", "build", "-", "-o", out, "--delimiter", ";"], semicolons);
    expect(told.code).toBe(0);
    expect(loadSnapshot(out).store.rowCount).toBe(2);
    const tabs = await run(["snapshot", "build", "-", "-o", out, "--delimiter", "tab"], semicolons.replaceAll(";", "\t"));
    expect(tabs.code).toBe(0);
    const badDelimiter = await run(["snapshot", "build", "-", "-o", out, "--delimiter", ";;"], semicolons);
    expect(badDelimiter.stderr).toContain('the delimiter must be one character (got ";;")');
    const key = await run(["snapshot", "build", "-", "-o", out, "--key", "user_id"], NDJSON);
    expect(key.code).toBe(1);
    expect(key.stderr).toEndWith('error: --key "user_id" is not a field of the input; fields: id, name, email, status\n');
  });

  test("an input that is a directory or missing says so with its path", async () => {
    const sub = join(dir, "input-dir");
    mkdirSync(sub, { recursive: true });
    const r = await run(["snapshot", "build", sub, "-o", join(dir, "dir.snap")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: ${sub}: cannot read the input: is a directory, not a data file\n`);
    const missing = await run(["snapshot", "build", join(dir, "nope.csv"), "-o", join(dir, "dir.snap")]);
    expect(missing.stderr).toBe(`error: ${join(dir, "nope.csv")}: cannot read the input: no such file\n`);
  });

  test("SIGTERM or SIGINT during the write removes the temporary file and keeps the previous snapshot; after a SIGKILL, the next build does", async () => {
    const input = join(dir, "large.ndjson");
    await writeUsers(input, { count: 300_000, seed: 3, format: "ndjson" });
    const sub = join(dir, "signals");
    mkdirSync(sub);
    const out = join(sub, "users.snap");
    ensureGeneratedSnapshot(out, SPEC, logger);
    const before = readFileSync(out);
    const hasTemporary = () => readdirSync(sub).some((name) => name.endsWith(".tmp"));
    for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
      // The kill must land while the temporary file exists (sent as soon as fs.watch reports it):
      // a build that finishes first misses that window, so a few attempts are allowed.
      let caught = false;
      for (let attempt = 0; attempt < 3 && !caught; attempt++) {
        const child = Bun.spawn([process.execPath, CLI, "snapshot", "build", input, "-o", out], { stdout: "ignore", stderr: "pipe" });
        if ((await untilInDir(sub, hasTemporary, child.exited)) !== null) {
          child.kill(signal);
          caught = true;
        }
        await child.exited;
        if (caught) {
          expect({ exitCode: child.exitCode, signalCode: child.signalCode }).toEqual({ exitCode: code, signalCode: null });
        }
        expect(readdirSync(sub)).toEqual(["users.snap"]);
        if (caught) expect(Buffer.compare(readFileSync(out), before)).toBe(0);
        else writeFileSync(out, before);
      }
      expect(caught).toBe(true);
    }
    // SIGKILL cannot be handled: its temporary file stays until the next build of the target.
    const killed = Bun.spawn([process.execPath, CLI, "snapshot", "build", input, "-o", out], { stdout: "ignore", stderr: "ignore" });
    await untilInDir(sub, hasTemporary, killed.exited);
    killed.kill("SIGKILL");
    await killed.exited;
    if (killed.signalCode === "SIGKILL") {
      expect(readdirSync(sub).filter((name) => name.startsWith(`.users.snap.${killed.pid}.`))).toHaveLength(1);
      expect((await run(["snapshot", "build", "-", "-o", out], NDJSON)).code).toBe(0);
      expect(readdirSync(sub)).toEqual(["users.snap"]);
    }
  }, 120_000);
});
