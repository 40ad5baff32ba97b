/**
 * The service under test for the end-to-end tests: a snapshot of a table (the default generated
 * users, the wide generated users, or any records with their columns and key) built into a
 * temporary directory and served in-process by startServer on a free port with the demo page,
 * plus the same records and columns for the naive oracle (test/support/table-oracle.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Page } from "playwright-core";
import { demoPlugin } from "../../../src/demo/plugin.ts";
import { USER_COLUMN_SPECS, USER_KEY } from "../../../src/generate/record.ts";
import { generateUsers } from "../../../src/generate/users.ts";
import { WIDE_COLUMN_SPECS } from "../../../src/generate/wide.ts";
import type { ColumnSpec } from "../../../src/schema/kinds.ts";
import { type RunningServer, startServer } from "../../../src/server.ts";
import { buildSnapshotFromGenerator } from "../../../src/generate/snapshot.ts";
import { writeSnapshot } from "../../../src/snapshot/write.ts";
import type { Table, TableRecord } from "../../support/table-oracle.ts";
import { SEED_SPECS, buildTableStore } from "../../support/table-store.ts";
import { type LaunchedBrowser, launchChromium } from "./browser.ts";

/** A running service over a table. */
export interface DemoService {
  server: RunningServer;
  /** The records the snapshot holds (any order; the oracle orders them), every column present. */
  records: TableRecord[];
  /** The snapshot's columns in schema order and its key column. */
  table: Table;
  /** Stops the server and deletes the temporary directory. */
  stop: () => Promise<void>;
}

/** Options of the demo services. */
export interface DemoServiceOptions {
  /** API keys: when given, every /api/* request needs `Authorization: Bearer <one of them>`. */
  apiKeys?: string[];
  /** An access policy file (docs/api.md "Access control"): when given, every /api/* request needs a credential of it. */
  access?: string;
}

/** Serves the snapshot at `snapshot` (in `dir`, deleted on stop) with the demo page on 127.0.0.1, port 0. */
function serve(dir: string, snapshot: string, records: TableRecord[], table: Table, options: DemoServiceOptions): DemoService {
  const server = startServer({
    snapshot,
    port: 0,
    host: "127.0.0.1",
    maxPageSize: 1000,
    logger: pino({ level: "warn" }),
    plugins: [demoPlugin()],
    apiKeys: options.apiKeys,
    access: options.access,
  });
  return {
    server,
    records,
    table,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The default data's table: the generated users' four columns keyed by `id` (src/generate/record.ts). */
export const DEFAULT_TABLE: Table = { specs: USER_COLUMN_SPECS, key: USER_KEY };

/**
 * Builds a snapshot of `count` users generated with `seed` the way `snapshot build` builds the
 * default data (about 1.3 s per 100k rows) and serves it with the demo page.
 * @throws SnapshotError or a file system error when the snapshot cannot be built or loaded.
 */
export async function startDemoService(count: number, seed: number, options: DemoServiceOptions = {}): Promise<DemoService> {
  const dir = mkdtempSync(join(tmpdir(), "users-e2e-"));
  const snapshot = join(dir, "users.snap");
  await buildSnapshotFromGenerator({ count, seed }, snapshot);
  const records = [...generateUsers({ count, seed })] as unknown as TableRecord[];
  return serve(dir, snapshot, records, DEFAULT_TABLE, options);
}

/**
 * Builds the snapshot of `records` with the columns and key of `table` (test/support/table-store.ts,
 * as `snapshot build` converts them) and serves it with the demo page.
 * @throws Error when a value does not fit its column's kind
 */
export function startTableDemoService(records: TableRecord[], table: Table, options: DemoServiceOptions = {}): DemoService {
  const dir = mkdtempSync(join(tmpdir(), "users-e2e-table-"));
  const snapshot = join(dir, "table.snap");
  writeSnapshot(snapshot, buildTableStore(records, table));
  return serve(dir, snapshot, records, table, options);
}

/** The wide generated users' table: the seed's four and src/generate/wide.ts's seven columns, keyed by `id`. */
export const WIDE_TABLE: Table = { specs: [...SEED_SPECS, ...WIDE_COLUMN_SPECS], key: "id" };

/** Serves `count` wide generated users (seed `seed`; src/generate/wide.ts) with the demo page. */
export function startWideDemoService(count: number, seed: number, options: DemoServiceOptions = {}): DemoService {
  const records = [...generateUsers({ count, seed, wide: true })] as unknown as TableRecord[];
  return startTableDemoService(records, WIDE_TABLE, options);
}

/** The values of the UUID table's `status`, in their declared (sort) order. */
export const UUID_STATUS_VALUES = ["active", "invited", "suspended", "deleted"] as const;

/**
 * A users table as many applications keep one: keyed by a UUID `user_id` (text), no `email`, a
 * `status` of four values declared out of collation order, and one column of every other kind
 * (with nulls where a kind allows them): `display_name` text, `logins` number, `signed_up` date,
 * `last_seen` datetime, `newsletter` boolean, `profile` json.
 */
export const UUID_TABLE: Table = {
  key: "user_id",
  specs: [
    { id: "user_id", kind: "text" },
    { id: "display_name", kind: "text" },
    { id: "status", kind: "enum", values: [...UUID_STATUS_VALUES] },
    { id: "logins", kind: "number" },
    { id: "signed_up", kind: "date" },
    { id: "last_seen", kind: "datetime" },
    { id: "newsletter", kind: "boolean" },
    { id: "profile", kind: "json" },
  ] satisfies ColumnSpec[],
};

/** A 32-bit PRNG (mulberry32): the same seed gives the same stream on every run. */
function mulberry32(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const DAY_MS = 86_400_000;

/**
 * `count` records of {@link UUID_TABLE}, deterministic for `seed`: random version-4 UUIDs,
 * display names of the generated users (accents, Cyrillic, CJK), statuses about 55/20/15/10 %,
 * logins 0–999 (null for about 1 in 10), sign-up days 2019–2025, last-seen instants in 2024–2025
 * with milliseconds (null for about 1 in 7), newsletter true/false (null for about 1 in 20), and
 * a profile object (null for about 1 in 8). Fields in schema order.
 */
export function uuidUsers(count: number, seed: number): TableRecord[] {
  const next = mulberry32(seed ^ 0x5bd1e995);
  const hex = (n: number, digits: number) => n.toString(16).padStart(digits, "0").slice(-digits);
  const uuid = () => {
    const a = next();
    const b = next();
    const c = next();
    const d = next();
    return `${hex(a, 8)}-${hex(b >>> 16, 4)}-4${hex(b, 3)}-${hex(0x8 | ((c >>> 30) & 0x3), 1)}${hex(c, 3)}-${hex(c >>> 12, 4)}${hex(d, 8)}`;
  };
  const first = Date.UTC(2019, 0, 1) / DAY_MS;
  const days = Date.UTC(2026, 0, 1) / DAY_MS - first;
  const seenFrom = Date.UTC(2024, 0, 1);
  const seenSpan = Date.UTC(2026, 0, 1) - seenFrom;
  const names = [...generateUsers({ count, seed })].map((u) => u.name);
  return names.map((name) => {
    const s = next() % 20;
    const status = s < 11 ? "active" : s < 15 ? "invited" : s < 18 ? "suspended" : "deleted";
    const logins = next() % 10 === 0 ? null : next() % 1000;
    const signedUp = new Date((first + (next() % days)) * DAY_MS).toISOString().slice(0, 10);
    const lastSeen = next() % 7 === 0 ? null : new Date(seenFrom + (next() % seenSpan)).toISOString();
    const n = next() % 20;
    const newsletter = n === 0 ? null : n % 2 === 1;
    const profile = next() % 8 === 0 ? null : { plan: ["free", "team", "enterprise"][next() % 3], seats: 1 + (next() % 50) };
    return { user_id: uuid(), display_name: name, status, logins, signed_up: signedUp, last_seen: lastSeen, newsletter, profile };
  });
}

/** A demo service and a Chromium page over it, the page's errors collected. */
export interface DemoSession {
  service: DemoService;
  browser: LaunchedBrowser;
  page: Page;
  /** Uncaught errors and console errors of the page, in order. */
  pageErrors: string[];
  /** Closes the browser and stops the service. */
  close: () => Promise<void>;
}

/** Chromium at `viewport` (CSS pixels; default 1600×1000) over a started service, its page errors and console errors and warnings collected. */
export async function openDemoSession(service: DemoService, viewport?: { width: number; height: number }): Promise<DemoSession> {
  const browser = await launchChromium(viewport);
  const pageErrors: string[] = [];
  browser.page.on("pageerror", (error) => pageErrors.push(error.message));
  browser.page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") pageErrors.push(`console.${message.type()}: ${message.text()}`);
  });
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

/** {@link startWideDemoService}, then {@link openDemoSession}. */
export async function openWideDemo(count: number, seed: number, viewport?: { width: number; height: number }): Promise<DemoSession> {
  return openDemoSession(startWideDemoService(count, seed), viewport);
}
