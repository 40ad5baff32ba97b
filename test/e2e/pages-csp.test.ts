/**
 * End to end: both pages work in Chromium under their Content-Security-Policy
 * (src/http/static-assets.ts), from the built, precompressed assets, with no request beyond
 * the service: the demo page's grid fills with no violation at all, and the docs UI renders
 * the operations of the OpenAPI document. The one violation the docs UI causes is Zod's probe
 * for `Function("")` (inside the Scalar bundle), which the CSP refuses as meant and Zod
 * answers by validating without generated code.
 *
 * Needs /usr/bin/chromium (`sh scripts/install-chromium.sh`). Run: `bun test test/e2e`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { demoPlugin } from "../../src/demo/plugin.ts";
import { generateUsers } from "../../src/generate/users.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";
import { type LaunchedBrowser, launchChromium, saveScreenshot } from "./support/browser.ts";

const TEST_MS = 120_000;

let dir: string;
let server: RunningServer;
let browser: LaunchedBrowser;

/** What a page did: CSP violations (directive and blocked URI), requests elsewhere, page errors, encodings received. */
interface PageReport {
  violations: string[];
  elsewhere: string[];
  errors: string[];
  encodings: Record<string, string>;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "users-e2e-csp-"));
  const snapshot = join(dir, "users.snap");
  writeSnapshot(snapshot, buildStoreFromRecords([...generateUsers({ count: 500, seed: 5 })]));
  server = startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 1000, logger: pino({ level: "warn" }), plugins: [demoPlugin()] });
  browser = await launchChromium();
}, TEST_MS);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/**
 * Opens `path` in a fresh page, waits for `ready` to hold in it, and reports what happened.
 * @param ready a predicate evaluated in the page
 */
async function visit(path: string, ready: () => boolean): Promise<PageReport> {
  const page = await browser.context.newPage();
  const report: PageReport = { violations: [], elsewhere: [], errors: [], encodings: {} };
  try {
    await page.exposeFunction("reportViolation", (text: string) => report.violations.push(text));
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) => (window as never as { reportViolation: (t: string) => void }).reportViolation(`${e.effectiveDirective} ${e.blockedURI}`));
    });
    page.on("pageerror", (error) => report.errors.push(error.message));
    page.on("response", (response) => {
      const encoding = response.headers()["content-encoding"];
      if (encoding !== undefined) report.encodings[new URL(response.url()).pathname] = encoding;
    });
    await page.route("**/*", (route) => {
      const target = route.request().url();
      if (target.startsWith(`${server.url}/`) || target.startsWith("data:")) return route.continue();
      report.elsewhere.push(target);
      return route.abort();
    });
    await page.goto(`${server.url}${path}`);
    await page.waitForFunction(ready, null);
    await saveScreenshot(page, `csp${path.replace(/\//g, "-")}`);
    return report;
  } finally {
    await page.close();
  }
}

describe("the pages under their Content-Security-Policy", () => {
  test(
    "the demo page loads its compressed bundle and both grids fill, with no violation",
    async () => {
      // A function, not a string: a string predicate is evaluated with eval, which the page's CSP refuses.
      const report = await visit("/", () => {
        const w = window as unknown as { gridApi?: { getDisplayedRowAtIndex(i: number): { data?: unknown } | undefined }; tanstackDemo?: { snapshot(): { settled: boolean } } };
        return w.gridApi?.getDisplayedRowAtIndex(0)?.data !== undefined && w.tanstackDemo?.snapshot().settled === true;
      });
      expect(report).toMatchObject({ violations: [], elsewhere: [], errors: [] });
      const scripts = Object.entries(report.encodings).filter(([path]) => path.startsWith("/assets/") && path.endsWith(".js"));
      expect(scripts.length).toBeGreaterThan(0);
      for (const [, encoding] of scripts) expect(["br", "zstd", "gzip"]).toContain(encoding);
    },
    TEST_MS,
  );

  test(
    "the docs UI renders the document's operations; only Zod's eval probe is refused",
    async () => {
      const report = await visit("/openapi", () => document.body.innerText.includes("List users (AG Grid Infinite Row Model"));
      expect({ elsewhere: report.elsewhere, errors: report.errors }).toEqual({ elsewhere: [], errors: [] });
      expect(report.violations.every((v) => v === "script-src eval")).toBe(true);
      expect(report.encodings).toMatchObject({ "/openapi/json": expect.any(String) });
      expect(Object.keys(report.encodings).some((p) => /^\/openapi\/assets\/scalar-[0-9a-f]+\.js$/.test(p))).toBe(true);
    },
    TEST_MS,
  );
});
