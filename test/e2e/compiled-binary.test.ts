/**
 * End to end: the single binary made by `bun build --compile --minify-whitespace --minify-syntax`
 * of the CLI and its workers' scripts (scripts/build-binary.ts `ENTRY_POINTS`) serves the demo page and its bundled assets (Bun's HTML imports are bundled into
 * the binary), works with no network beyond the service itself, and `serve --no-demo` leaves `/`
 * a 404. The binary runs from a temporary directory, away from the source tree and node_modules.
 *
 * Needs /usr/bin/chromium (`sh scripts/install-chromium.sh`). Run: `bun test test/e2e`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateUsers } from "../../src/generate/users.ts";
import { buildSnapshotFromGenerator } from "../../src/generate/snapshot.ts";
import { ENTRY_POINTS } from "../../scripts/build-binary.ts";
import { naiveQuery } from "../support/oracle.ts";
import { type LaunchedBrowser, launchChromium, saveScreenshot } from "./support/browser.ts";

const REPO = resolve(import.meta.dir, "../..");
/** Rows in the binary's snapshot: small, the point here is packaging, not the engine. */
const COUNT = 5_000;
const SEED = 3;
const TEST_MS = 120_000;

let dir: string;
let binary: string;
let snapshot: string;
const running: Bun.Subprocess<"ignore", "pipe", "pipe">[] = [];

/**
 * Starts `<binary> serve --snapshot … --port 0` (plus `extra` arguments) in the temporary
 * directory and waits for its "listening" log line (pino JSON lines on stderr, src/log.ts).
 * @returns the bound URL, e.g. http://127.0.0.1:41234.
 * @throws Error when the process exits before it logs "listening".
 */
async function serveBinary(extra: string[] = []): Promise<string> {
  const proc = Bun.spawn([binary, "serve", "--snapshot", snapshot, "--port", "0", "--host", "127.0.0.1", ...extra], {
    cwd: dir,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  running.push(proc);
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  // The wait ends with "listening" or with the process's exit (a process that hangs is the
  // test's timeout's to end, and afterAll's to kill).
  const exited = proc.exited.then(() => ({ value: undefined, done: true as const }));
  let log = "";
  let url: string | undefined;
  try {
    for (;;) {
      const { value, done } = await Promise.race([reader.read(), exited]);
      if (done) break;
      log += decoder.decode(value, { stream: true });
      const line = log.split("\n").find((l) => l.includes('"msg":"listening"'));
      if (line !== undefined) {
        url = (JSON.parse(line) as { url: string }).url;
        break;
      }
    }
  } finally {
    try {
      reader.releaseLock();
    } catch {
      // a read still pending when the process exited: the stream is ending anyway
    }
  }
  if (url !== undefined) {
    // Keep draining the log so a chatty server never blocks on a full pipe.
    proc.stderr.pipeTo(new WritableStream()).catch(() => {});
    return url;
  }
  throw new Error(`the binary did not start listening:\n${log}`);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "users-e2e-binary-"));
  binary = join(dir, "users-listing");
  const build = Bun.spawnSync(
    [process.execPath, "build", "--compile", "--minify-whitespace", "--minify-syntax", ...ENTRY_POINTS, "--outfile", binary],
    { cwd: REPO, stdout: "pipe", stderr: "pipe" },
  );
  if (build.exitCode !== 0) throw new Error(`bun build --compile failed:\n${build.stdout}\n${build.stderr}`);
  snapshot = join(dir, "users.snap");
  await buildSnapshotFromGenerator({ count: COUNT, seed: SEED }, snapshot);
}, TEST_MS);

afterAll(async () => {
  for (const proc of running) proc.kill();
  await Promise.all(running.map((proc) => proc.exited));
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe("the compiled binary", () => {
  test(
    "serves the demo page and its assets, and both clients work offline in Chromium",
    async () => {
      const url = await serveBinary();
      const html = await fetch(`${url}/`);
      expect(html.status).toBe(200);
      expect(html.headers.get("content-type")).toContain("text/html");
      const body = await html.text();
      expect(body).toContain("<h1>Users listing service</h1>");
      const assets = [...body.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
      expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
      expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
      for (const asset of assets) {
        const response = await fetch(`${url}${asset}`);
        expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
        expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(100);
      }

      const browser: LaunchedBrowser = await launchChromium();
      try {
        const { page } = browser;
        const elsewhere: string[] = [];
        const errors: string[] = [];
        page.on("pageerror", (error) => errors.push(error.message));
        // Offline: anything but the service itself is refused and recorded.
        await page.route("**/*", (route) => {
          const target = route.request().url();
          if (target.startsWith(`${url}/`) || target.startsWith("data:")) return route.continue();
          elsewhere.push(target);
          return route.abort();
        });
        await page.goto(`${url}/`);
        await page.waitForFunction(
          () => window.gridApi?.getDisplayedRowAtIndex(99)?.data !== undefined && window.tanstackDemo?.snapshot().settled === true,
          null,
        );
        const records = [...generateUsers({ count: COUNT, seed: SEED })];
        const expected = naiveQuery(records, { filter: null, sort: [], offset: 0, limit: 100 });
        const shown = await page.evaluate(() => ({
          agRowCount: window.gridApi.getDisplayedRowCount(),
          agIds: Array.from({ length: 100 }, (_, i) => window.gridApi.getDisplayedRowAtIndex(i)?.data?.id),
          tanstack: window.tanstackDemo.snapshot(),
        }));
        expect(shown.agRowCount).toBe(expected.total);
        expect(shown.agIds).toEqual(expected.rows.map((r) => r.id));
        expect({ total: shown.tanstack.total, ids: shown.tanstack.rows.map((r) => r.id) }).toEqual({
          total: expected.total,
          ids: expected.rows.slice(0, 10).map((r) => r.id),
        });
        await saveScreenshot(page, "compiled-binary-demo");
        expect({ elsewhere, errors }).toEqual({ elsewhere: [], errors: [] });
      } finally {
        await browser.close();
      }
    },
    TEST_MS,
  );

  test(
    "serve --no-demo omits the page but still serves /api/users",
    async () => {
      const url = await serveBinary(["--no-demo"]);
      const root = await fetch(`${url}/`);
      expect(root.status).toBe(404);
      expect(root.headers.get("content-type")).toContain("application/problem+json");
      const api = await fetch(`${url}/api/users?pageSize=2`);
      expect(api.status).toBe(200);
      expect(((await api.json()) as { total: number }).total).toBe(COUNT);
    },
    TEST_MS,
  );
});
