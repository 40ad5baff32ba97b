/**
 * Screenshots of the demo page for the docs (docs/screenshots/): a served page at 1280×900
 * with a search typed and AG Grid's facet-fed set filter open, the same page on a 390×844
 * phone, and the empty state. Needs Chromium (`sh scripts/install-chromium.sh`) and a running
 * server. The facet column defaults to the first enum or boolean column of the served schema
 * (none: no filter is opened).
 *
 *   bun scripts/demo-screenshots.ts http://127.0.0.1:3000/ <name> [search] [facet column]
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { launchChromium } from "../test/e2e/support/browser.ts";

const [url = "http://127.0.0.1:3000/", name = "default", search = "ana gmail", facetColumn] = process.argv.slice(2);
const out = resolve(import.meta.dir, "..", "docs", "screenshots");
mkdirSync(out, { recursive: true });

for (const [device, viewport] of [["desktop", { width: 1280, height: 900 }], ["phone", { width: 390, height: 844 }]] as const) {
  const browser = await launchChromium(viewport);
  const page = browser.page;
  await page.goto(url);
  await page.waitForFunction(() => window.gridApi?.getDisplayedRowAtIndex(0)?.data !== undefined && window.tanstackDemo?.snapshot().settled);
  await page.fill("#search", search);
  await page.waitForFunction((q) => window.tanstackDemo.snapshot().globalFilter === q && window.tanstackDemo.snapshot().settled, search);
  await page.waitForTimeout(600);
  const column = facetColumn ?? (await page.evaluate(() => window.demoSchema?.columns.find((c) => c.kind === "enum" || c.kind === "boolean")?.id));
  if (device === "desktop" && column !== undefined) {
    await page.evaluate((c) => window.gridApi.ensureColumnVisible(c), column);
    await page.locator(`.ag-header-cell[col-id="${column}"] .ag-header-cell-filter-button`).click();
    await page.waitForSelector(".facet-filter .facet-value");
    await page.waitForTimeout(300);
  }
  await page.screenshot({ path: join(out, `${name}-${device}.png`), fullPage: device === "phone" });
  if (device === "desktop") {
    await page.keyboard.press("Escape");
    await page.fill("#search", "qqqzzzxxx");
    await page.waitForSelector("#ts-empty:not([hidden])");
    await page.waitForSelector("#ag-empty:not([hidden])");
    await page.screenshot({ path: join(out, `${name}-empty.png`) });
  }
  await browser.close();
}
console.log(`screenshots in ${out}`);
