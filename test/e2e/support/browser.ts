/**
 * Chromium for the end-to-end tests: Debian's /usr/bin/chromium (scripts/install-chromium.sh)
 * driven by playwright-core, headless, with a fresh user data directory per launch.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type BrowserContext, type Page, chromium } from "playwright-core";

/** The browser the tests drive (installed by scripts/install-chromium.sh). */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Command-line switches: headless, no sandbox (root in a container), and nothing that phones home. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Where screenshots go: `test-artifacts/` at the repository root (gitignored). */
export const ARTIFACTS_DIR = resolve(import.meta.dir, "../../../test-artifacts");

/** A launched browser: its context, its first page, and a `close` that also removes the profile. */
export interface LaunchedBrowser {
  context: BrowserContext;
  page: Page;
  /** Closes the browser and deletes its user data directory. */
  close: () => Promise<void>;
}

/**
 * Launches Chromium with a fresh user data directory (`chromium.launchPersistentContext`); its
 * waits have no time limit (Playwright's default is 30 s).
 * @param viewport page size in CSS pixels.
 * @throws Error when /usr/bin/chromium is missing (run `sh scripts/install-chromium.sh` as root).
 */
export async function launchChromium(viewport = { width: 1600, height: 1000 }): Promise<LaunchedBrowser> {
  if (!(await Bun.file(CHROMIUM_PATH).exists())) {
    throw new Error(`${CHROMIUM_PATH} is missing: run \`sh scripts/install-chromium.sh\` as root`);
  }
  const profile = mkdtempSync(join(tmpdir(), "users-e2e-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
    headless: true,
    viewport,
  });
  // No time limit on any wait (navigation, waitForFunction, locators): a wait ends on the
  // page's event or state, and one that never comes is the test's timeout's to end.
  context.setDefaultTimeout(0);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Saves a screenshot of `page` (or of the element matching `selector`) as `test-artifacts/<name>.png`.
 * @returns the file path.
 */
export async function saveScreenshot(page: Page, name: string, selector?: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  if (selector === undefined) await page.screenshot({ path, fullPage: true });
  else await page.locator(selector).screenshot({ path });
  return path;
}
