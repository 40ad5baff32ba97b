/**
 * The running service: loads a snapshot, serves the app on Bun, and reloads the snapshot on
 * SIGHUP (a failed reload is logged and the old snapshot keeps serving).
 */
import type { Elysia } from "elysia";
import type { Logger } from "pino";
import { type Engine, createEngine } from "./engine/execute.ts";
import { createApp } from "./http/app.ts";
import { defaultCacheDir, loadPrivately, pruneCache } from "./snapshot/private-copy.ts";

/** Options of {@link startServer}. */
export interface ServeOptions {
  /** Snapshot file path. */
  snapshot: string;
  port: number;
  host: string;
  /** Largest page size / row window, in rows. */
  maxPageSize: number;
  logger: Logger;
  /** Verify section checksums at load (default true). */
  verify?: boolean;
  /**
   * Where the server keeps its private copies of the snapshot (snapshot/private-copy.ts): it
   * maps a copy, never the file at `snapshot`, so that file may be replaced, truncated or
   * deleted while serving. Default: `.snapshot-cache` beside the snapshot.
   */
  cacheDir?: string;
  /** Extra app routes (the demo page). */
  plugins?: Elysia<any>[];
  /** Let several processes listen on one port (SO_REUSEPORT). */
  reusePort?: boolean;
}

/** A running server. */
export interface RunningServer {
  /** The bound URL, e.g. http://127.0.0.1:3000. */
  url: string;
  port: number;
  engine: () => Engine;
  /**
   * Loads the snapshot file again and swaps it in.
   * @throws SnapshotError when the new file is refused; the old snapshot keeps serving.
   */
  reload: () => void;
  stop: () => Promise<void>;
}

/**
 * Loads the snapshot and starts listening.
 * @throws SnapshotError when the snapshot is missing or refused.
 */
export function startServer(options: ServeOptions): RunningServer {
  const { logger } = options;
  const cacheDir = options.cacheDir ?? defaultCacheDir(options.snapshot);
  const load = () => loadPrivately(options.snapshot, { verify: options.verify, cacheDir });
  const loaded = load();
  pruneCache(cacheDir, [loaded.privatePath]);
  logger.info(
    { snapshot: options.snapshot, rows: loaded.store.rowCount, bytes: loaded.bytes, snapshotId: loaded.store.snapshotId, loadMs: Math.round(loaded.loadMs) },
    "snapshot loaded",
  );
  let engine = createEngine(loaded.store);
  const app = createApp({ engine: () => engine, maxPageSize: options.maxPageSize, logger, plugins: options.plugins });
  // development: false: no hot-reload socket or dev bundling for the demo page in a served process.
  app.listen({ port: options.port, hostname: options.host, reusePort: options.reusePort, maxRequestBodySize: 16 * 1024 * 1024, development: false });
  const server = app.server;
  if (server === null) throw new Error("server did not start");
  const reload = () => {
    const next = load();
    engine = createEngine(next.store);
    // The previous copy stays mapped until its engine is unreachable; its file can go now.
    pruneCache(cacheDir, [next.privatePath]);
    logger.info({ rows: next.store.rowCount, snapshotId: next.store.snapshotId, loadMs: Math.round(next.loadMs) }, "snapshot reloaded");
  };
  const onHup = () => {
    try {
      reload();
    } catch (error) {
      logger.error({ err: error }, "reload failed; still serving the previous snapshot");
    }
  };
  process.on("SIGHUP", onHup);
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${server.port}`;
  logger.info({ url }, "listening");
  return {
    url,
    port: server.port as number,
    engine: () => engine,
    reload,
    stop: async () => {
      process.off("SIGHUP", onHup);
      await app.stop();
    },
  };
}
