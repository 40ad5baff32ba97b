/**
 * The service under test for the end-to-end tests: a snapshot of generated users built into a
 * temporary directory, served in-process by startServer on a free port with the demo page, plus
 * the same users as records for the naive oracle (test/support/oracle.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { demoPlugin } from "../../../src/demo/plugin.ts";
import { generateUsers } from "../../../src/generate/users.ts";
import type { UserRecord } from "../../../src/generate/record.ts";
import { type RunningServer, startServer } from "../../../src/server.ts";
import { buildSnapshotFromGenerator } from "../../../src/snapshot/build-file.ts";
import { WIDE_COLUMN_SPECS, wideRecords } from "../../../src/generate/wide.ts";
import { writeSnapshot } from "../../../src/snapshot/write.ts";
import { type WideRecord, buildWideStore } from "../../support/table-store.ts";
import type { Page } from "playwright-core";
import { type LaunchedBrowser, launchChromium } from "./browser.ts";

/** A running service over generated users. */
export interface DemoService {
  server: RunningServer;
  /** The records the snapshot holds, in id order (generateUsers with the same count and seed). */
  records: UserRecord[];
  /** Snapshot file path (inside a temporary directory). */
  snapshot: string;
  /** Stops the server and deletes the temporary directory. */
  stop: () => Promise<void>;
}

/**
 * Builds a snapshot of `count` users generated with `seed` (about 1.3 s per 100k rows) and serves
 * it with the demo page on 127.0.0.1, port 0 (a free one).
 * @throws SnapshotError or a file system error when the snapshot cannot be built or loaded.
 */
export async function startDemoService(count: number, seed: number): Promise<DemoService> {
  const dir = mkdtempSync(join(tmpdir(), "users-e2e-"));
  const snapshot = join(dir, "users.snap");
  await buildSnapshotFromGenerator({ count, seed }, snapshot);
  const records = [...generateUsers({ count, seed })];
  const server = startServer({
    snapshot,
    port: 0,
    host: "127.0.0.1",
    maxPageSize: 1000,
    logger: pino({ level: "warn" }),
    plugins: [demoPlugin()],
  });
  return {
    server,
    records,
    snapshot,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A running service over generated wide users (the seed's four and src/generate/wide.ts's columns). */
export interface WideDemoService {
  server: RunningServer;
  /** The records the snapshot holds, with every column. */
  records: WideRecord[];
  /** Stops the server and deletes the temporary directory. */
  stop: () => Promise<void>;
}

/**
 * Builds a wide snapshot of `count` generated users (seed `seed`) and serves it with the demo
 * page on 127.0.0.1, port 0.
 */
export function startWideDemoService(count: number, seed: number): WideDemoService {
  const dir = mkdtempSync(join(tmpdir(), "users-e2e-wide-"));
  const make = wideRecords(count, seed);
  const records = [...generateUsers({ count, seed })].map((u, i) => make(i, u.id, u.name, u.email, u.status) as unknown as WideRecord);
  const snapshot = join(dir, "wide.snap");
  writeSnapshot(snapshot, buildWideStore(records, WIDE_COLUMN_SPECS));
  const server = startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 1000, logger: pino({ level: "warn" }), plugins: [demoPlugin()] });
  return {
    server,
    records,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A wide demo service and a Chromium page over it, the page's errors collected. */
export interface WideDemoSession {
  service: WideDemoService;
  browser: LaunchedBrowser;
  page: Page;
  /** Uncaught errors of the page, in order. */
  pageErrors: string[];
  /** Closes the browser and stops the service. */
  close: () => Promise<void>;
}

/** {@link startWideDemoService}, then Chromium at `viewport` (CSS pixels; default 1600×1000). */
export async function openWideDemo(count: number, seed: number, viewport?: { width: number; height: number }): Promise<WideDemoSession> {
  const service = startWideDemoService(count, seed);
  const browser = await launchChromium(viewport);
  const pageErrors: string[] = [];
  browser.page.on("pageerror", (error) => pageErrors.push(error.message));
  return {
    service,
    browser,
    page: browser.page,
    pageErrors,
    close: async () => {
      await browser.close();
      await service.stop();
    },
  };
}
