/**
 * The demo page refreshes itself from change events (docs/api.md "GET /api/users/changes"), in
 * Chromium: PostgreSQL with `wal_level = logical`, the publisher (`snapshot follow`) and a
 * replica (`serve --source --poll 0.1`) with an access policy of two roles, `admin` (every row)
 * and `actives` (the rows whose status is active), each on a page of its own. A change
 * committed in PostgreSQL shows in both grids of the pages whose role sees the row, without any
 * user action; the other page is told nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import postgres from "postgres";
import { readManifest } from "../../src/publish/publish.ts";
import { openStorage } from "../../src/io/storage.ts";
import { type TestPostgres, startPostgres } from "../support/postgres.ts";
import { ROOT, type ServeProcess, spawnServe } from "../support/serve-process.ts";
import { untilInDir } from "../support/watch-dir.ts";
import { type LaunchedBrowser, launchChromium } from "./support/browser.ts";
import { openDemoPage } from "./support/demo-page.ts";
import { ACTIVES_KEY, ADMIN_KEY, writeActivesPolicy } from "../support/actives-policy.ts";


let pg: TestPostgres;
let sql: postgres.Sql;
let dir: string;
beforeAll(async () => {
  pg = startPostgres({ logical: true });
  sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  await sql.unsafe(`
    CREATE TABLE people (id bigint PRIMARY KEY, name text NOT NULL, email text, status text);
    INSERT INTO people SELECT g, 'user ' || g, 'u' || g || '@x.io', CASE WHEN g % 2 = 1 THEN 'active' ELSE 'inactive' END FROM generate_series(1, 300) AS g;
  `);
  dir = mkdtempSync(join(tmpdir(), "users-e2e-live-"));
  writeActivesPolicy(dir);
}, 60_000);
afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The name shown for `id` in AG Grid's loaded rows and in TanStack's page (null where the row is not shown). */
function shownNames(page: Page, id: number): Promise<{ ag: string | null; ts: string | null }> {
  return page.evaluate((key) => {
    let ag: string | null = null;
    window.gridApi.forEachNode((node) => {
      if (node.data !== undefined && node.data.id === key) ag = String(node.data.name);
    });
    const row = window.tanstackDemo.snapshot().rows.find((r) => r.id === key);
    return { ag, ts: row === undefined ? null : String(row.name) };
  }, id);
}

/** Opens the demo page with `credential` stored for the tab (as the page's Authorization field stores it). */
async function openAs(browser: LaunchedBrowser, url: string, credential: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.addInitScript((key) => sessionStorage.setItem("users-listing-demo.authorization", key), credential);
  await openDemoPage(page, url);
  return page;
}

describe("the demo page and change events", () => {
  test("a change committed in PostgreSQL shows in both grids of the pages whose role sees it, by itself", async () => {
    const location = join(dir, "published");
    const publisher = Bun.spawn(
      [process.execPath, join(ROOT, "src", "cli.ts"), "snapshot", "follow", "--from", pg.url, "--table", "people", "--to", location, "--work-dir", join(dir, "work"), "--batch-ms", "50"],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "warn" }, stdin: "ignore", stdout: "ignore", stderr: "ignore" },
    );
    let replica: ServeProcess | null = null;
    let browser: LaunchedBrowser | null = null;
    try {
      // the first snapshot published: the manifest written into the location (fs.watch)
      await untilInDir(location, async () => (await readManifest(openStorage(location)).catch(() => null))?.current.lsn !== undefined);
      replica = await spawnServe(null, ["--demo", "--source", location, "--poll", "0.1", "--access", join(dir, "policy.json"), "--cache-dir", join(dir, "replica")]);
      await replica.waitForLine((l) => l.msg === "HTTP envelope", { what: "the first snapshot serving" });
      browser = await launchChromium();
      const admin = await openAs(browser, replica.url, ADMIN_KEY);
      const actives = await openAs(browser, replica.url, ACTIVES_KEY);
      // both pages are subscribed before the first commit (their first event is the version)
      for (const page of [admin, actives]) await page.waitForFunction(() => Array.isArray(window.demoChanges), null);
      expect(await shownNames(admin, 1)).toEqual({ ag: "user 1", ts: "user 1" });
      expect(await shownNames(actives, 1)).toEqual({ ag: "user 1", ts: "user 1" });
      expect(await shownNames(actives, 2)).toEqual({ ag: null, ts: null });

      // an inactive row (only the admin sees it), then an active one (both do)
      await sql`UPDATE people SET name = 'renamed two' WHERE id = 2`;
      const committed = performance.now();
      await sql`UPDATE people SET name = 'renamed one' WHERE id = 1`;
      const shows = (name: string, id: number) => (page: Page) =>
        page.waitForFunction(
          ([key, want]) => {
            let ag: unknown = null;
            window.gridApi.forEachNode((node) => {
              if (node.data !== undefined && node.data.id === key) ag = node.data.name;
            });
            return ag === want && window.tanstackDemo.snapshot().rows.find((r) => r.id === key)?.name === want;
          },
          [id, name] as const,
        );
      await Promise.all([shows("renamed one", 1)(admin), shows("renamed one", 1)(actives), shows("renamed two", 2)(admin)]);
      console.log(`commit → shown in both grids of both pages: ${Math.round(performance.now() - committed)} ms`);
      // the actives page was told of row 1 alone, never of row 2
      const told = (page: Page) => page.evaluate(() => window.demoChanges.map((c) => c.keys));
      expect((await told(actives)).flat()).toEqual([1]);
      expect((await told(admin)).flat().sort()).toEqual([1, 2]);
    } finally {
      await browser?.close();
      publisher.kill("SIGKILL");
      await publisher.exited;
      await replica?.dispose();
    }
  }, 120_000);
});
