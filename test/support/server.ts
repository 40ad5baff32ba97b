/**
 * Test helper: builds a snapshot into a temporary folder and starts the real server on a free
 * port of 127.0.0.1, so tests talk to it over a socket.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino, { type Logger } from "pino";
import { DEFAULT_DATA } from "../../src/cli.ts";
import { buildSnapshotFromGenerator } from "../../src/generate/snapshot.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "./table-store.ts";
import type { UserRecord } from "../../src/generate/record.ts";
import type { Store } from "../../src/store/types.ts";
import type { CorsPolicy } from "../../src/http/cors.ts";
import { type RunningServer, startServer } from "../../src/server.ts";

/** A started test server and how to clean it up. */
export interface TestServer {
  url: string;
  server: RunningServer;
  snapshot: string;
  close: () => Promise<void>;
}

/** Envelope settings of a test server (all off by default, as in `serve`). */
export interface TestServerOptions {
  /** Allowed CORS origins (src/http/cors.ts `parseCorsOrigins`). */
  cors?: CorsPolicy | null;
  /** API keys for /api/* and /metrics. */
  apiKeys?: string[];
  /** The server's logger (default: silent). */
  logger?: Logger;
  /** `--query-timeout-ms` (default 30000). */
  queryTimeoutMs?: number;
  /** `--max-queued` (default 1024). */
  maxQueued?: number;
  /** Generated users when `records` is "default" (default: DEFAULT_DATA's count). */
  count?: number;
}

/**
 * Starts a server over `records`, over a built store (one with added columns, say), or over the
 * default generated dataset when `records` is "default" (DEFAULT_DATA: 100,000 users, seed 1;
 * `options.count` users instead when given).
 */
export function startTestServer(records: readonly UserRecord[] | Store | "default", maxPageSize = 1000, options: TestServerOptions = {}): TestServer {
  const dir = mkdtempSync(join(tmpdir(), "users-http-"));
  const snapshot = join(dir, "users.snap");
  if (records === "default") buildSnapshotFromGenerator({ ...DEFAULT_DATA, count: options.count ?? DEFAULT_DATA.count }, snapshot);
  else if (Array.isArray(records)) writeSnapshot(snapshot, buildStoreFromRecords(records as readonly UserRecord[]));
  else writeSnapshot(snapshot, records as Store);
  const server = startServer({
    snapshot,
    port: 0,
    host: "127.0.0.1",
    maxPageSize,
    logger: options.logger ?? pino({ level: "silent" }),
    cors: options.cors ?? null,
    apiKeys: options.apiKeys,
    queryTimeoutMs: options.queryTimeoutMs,
    maxQueued: options.maxQueued,
  });
  return {
    url: server.url,
    server,
    snapshot,
    close: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
