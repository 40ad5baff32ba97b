/**
 * `serve FILE` (docs/api.md "Any users table"): a data file served in one command, as real
 * processes — built into the cache directory by `snapshot build`'s rules (a UUID key, a secret
 * column left out, a semicolon CSV), reused on a restart while the file and the options are
 * unchanged, rebuilt and swapped in with `--watch` (a broken file keeps the old version serving),
 * and `serve --snapshot` of a data file refused with a pointer to `serve FILE`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, spawnServe } from "../support/serve-process.ts";

let dir: string;
let csv: string;
const header = "user_id;name;status;password_hash\n";
const row = (i: number) => `${(0x3f2a0000 + i).toString(16)}-0b7d-4c6e-9a1f-2d3e4f5a6b7c;User ${i};${["active", "invited", "suspended", "deleted"][i % 4]};$2a$10$x${i}\n`;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "users-serve-file-"));
  csv = join(dir, "users.csv");
  writeFileSync(csv, header + Array.from({ length: 40 }, (_, i) => row(i)).join(""));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const options = ["--key", "user_id", "--exclude", "password_hash", "--delimiter", ";"];

describe("serve FILE", () => {
  test("builds the file, serves it, reuses the build on a restart", async () => {
    const first = await spawnServe(null, [csv, ...options]);
    try {
      const body = (await (await fetch(`${first.url}/api/users?pageSize=100&sortBy=name`)).json()) as { data: Record<string, unknown>[]; total: number };
      expect(body.total).toBe(40);
      expect(Object.keys(body.data[0])).toEqual(["user_id", "name", "status"]);
      expect(first.logs().some((l) => l.msg === "built the data file into a snapshot")).toBe(true);
      const schema = (await (await fetch(`${first.url}/api/users/schema`)).json()) as { key: string; columns: { id: string; kind: string; values?: string[] }[] };
      expect(schema.key).toBe("user_id");
      expect(schema.columns.find((c) => c.id === "status")).toEqual({ id: "status", kind: "enum", values: ["active", "deleted", "invited", "suspended"] });
    } finally {
      await first.dispose();
    }
    const again = await spawnServe(null, [csv, ...options]);
    try {
      expect(again.logs().some((l) => l.msg === "serving the data file's cached build (unchanged file and options)")).toBe(true);
      expect(((await (await fetch(`${again.url}/api/users?pageSize=1`)).json()) as { total: number }).total).toBe(40);
    } finally {
      await again.dispose();
    }
  }, 60_000);

  test("--watch builds a changed file again and swaps it in; a broken one keeps the old version", async () => {
    const serve = await spawnServe(null, [csv, ...options, "--watch"]);
    try {
      const total = async () => ((await (await fetch(`${serve.url}/api/users?pageSize=1`)).json()) as { total: number }).total;
      const before = await total();
      const seen = serve.logs().length;
      appendFileSync(csv, row(1000));
      await serve.waitForLine((l) => l.msg === "the data file changed: built and swapped in", { after: seen, what: "the rebuild" });
      expect(await total()).toBe(before + 1);
      const seenBroken = serve.logs().length;
      appendFileSync(csv, "not;enough\n");
      const failed = await serve.waitForLine((l) => l.msg === "building the changed data file failed; still serving the previous version", { after: seenBroken, what: "the refused rebuild" });
      expect(JSON.stringify(failed)).toContain("users.csv");
      expect(await total()).toBe(before + 1);
    } finally {
      await serve.dispose();
    }
  }, 120_000);

  test("serve --snapshot of a data file says to serve the file", () => {
    const result = Bun.spawnSync([process.execPath, join(ROOT, "src", "cli.ts"), "serve", "--snapshot", csv, "--port", "0"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    expect(result.exitCode).toBe(1);
    expect(result.stderr.toString()).toContain(`${csv} is not a snapshot but a data file: serve it with \`serve ${csv}\``);
  });
});
