/**
 * The running service: loads a snapshot, serves the app on Bun, reloads the snapshot on SIGHUP
 * (a failed reload is logged and the old snapshot keeps serving), and drains on request
 * (docs/api.md "HTTP envelope", Operations: the caller wires SIGTERM and SIGINT to it).
 */
import type { Server } from "bun";
import type { Logger } from "pino";
import { type Engine, createEngine } from "./engine/execute.ts";
import { type AccessControl, createAccessControl } from "./access/control.ts";
import { isLoopbackHost, createKeyCheck } from "./http/api-keys.ts";
import { type ServerState, createService } from "./http/app.ts";
import type { CorsPolicy } from "./http/cors.ts";
import { type ServerMetrics, createMetrics } from "./http/metrics.ts";
import { bunListenOptions, listenUrl } from "./http/listen.ts";
import { problemResponse } from "./http/responses.ts";
import type { Plugin } from "./http/routes.ts";
import { defaultCacheDir, loadPrivately, pruneCache } from "./snapshot/private-copy.ts";

/** Longest a drain waits for requests in flight before closing their connections, in ms (exit within 10 s). */
export const DRAIN_TIMEOUT_MS = 8000;

/** Longest each last step of a drain (closing the connections left, flushing the log) may take, in ms. */
const STEP_TIMEOUT_MS = 500;

/** Waits for `promise` to settle, at most `ms`; resolves to true when the time ran out first. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), ms);
  });
  const settled = promise.then(
    () => false,
    () => false,
  );
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

/**
 * A port number from the command line or the environment.
 * @param name where the value came from (`--port`, `PORT`), for the message
 * @throws Error `PORT must be an integer from 0 to 65535 (got "abc")` for anything else
 */
export function parsePort(value: string, name: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || port > 65535) throw new Error(`${name} must be an integer from 0 to 65535 (got "${value}")`);
  return port;
}

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
  /** Extra routes (the demo page). */
  plugins?: readonly Plugin[];
  /**
   * The resource name: every data route is served under `/api/<resource>` (docs/api.md
   * "Resource name"; checked by http/resource.ts `parseResourceName`). Default `users`.
   */
  resource?: string;
  /** Let several processes listen on one port (SO_REUSEPORT). */
  reusePort?: boolean;
  /**
   * A server already listening (http/starting.ts, bound with {@link bunListenOptions} of the
   * same port, host and reusePort): its handlers are replaced by this service's (Bun's
   * `server.reload`), so the socket and the clients' keep-alive connections stay open across
   * the handover, and no request meets a closed port. Absent: a new server binds.
   */
  listener?: Server<unknown>;
  /** Allowed CORS origins (http/cors.ts `parseCorsOrigins`); null or absent: CORS off. */
  cors?: CorsPolicy | null;
  /** API keys for /api/* and /metrics; empty or absent: keys off. */
  apiKeys?: readonly string[];
  /**
   * The access policy file (docs/api.md "Access control"): checked against the snapshot's
   * schema at start-up; when given, `apiKeys` is not used. Absent: access control off.
   */
  access?: string;
}

/** A running server. */
export interface RunningServer {
  /** The bound URL, e.g. http://127.0.0.1:3000. */
  url: string;
  port: number;
  engine: () => Engine;
  /** "ready" while serving, "draining" once {@link RunningServer.drain} began. */
  state: () => ServerState;
  metrics: ServerMetrics;
  /** The access control (its `reload` re-reads the policy: SIGHUP), or null when off. */
  access: AccessControl | null;
  /**
   * Loads the snapshot file again and swaps it in; counted in the reload metric by result.
   * @throws SnapshotError when the new file is refused; the old snapshot keeps serving.
   */
  reload: () => void;
  /**
   * Drains (SIGTERM): /readyz turns 503, the listening socket closes (new connections are
   * refused) and so do idle keep-alive connections (Bun's `server.stop(false)`), requests in
   * flight finish, and every answer sent meanwhile carries `Connection: close`. Resolves once
   * none is left, or after {@link DRAIN_TIMEOUT_MS}, when the rest are cut. Logs its start and
   * end. Calling it again returns the same promise.
   */
  drain: () => Promise<void>;
  /** Stops at once, closing every connection (tests). */
  stop: () => Promise<void>;
}

/**
 * Loads the snapshot and starts listening.
 * @throws SnapshotError when the snapshot is missing or refused; PolicyError (access/policy.ts)
 *   when the access policy is refused; Error when the port cannot be bound or the resource name
 *   is invalid
 */
export function startServer(options: ServeOptions): RunningServer {
  const { logger } = options;
  let state: ServerState = "starting";
  const cacheDir = options.cacheDir ?? defaultCacheDir(options.snapshot);
  const load = () => loadPrivately(options.snapshot, { verify: options.verify, cacheDir });
  const loaded = load();
  pruneCache(cacheDir, [loaded.privatePath]);
  logger.info(
    { snapshot: options.snapshot, rows: loaded.store.rowCount, bytes: loaded.bytes, snapshotId: loaded.store.snapshotId, loadMs: Math.round(loaded.loadMs) },
    "snapshot loaded",
  );
  let engine = createEngine(loaded.store);
  let loadMs = loaded.loadMs;
  let createdAt = loaded.header.createdAt;

  // Bun's count of requests being answered; set once the server exists.
  let pending = () => 0;
  const metrics = createMetrics({
    inFlight: () => pending(),
    engine: () => engine,
    snapshot: () => ({ rows: engine.store.rowCount, snapshotId: engine.store.snapshotId, loadMs, createdAt }),
  });
  const access = options.access === undefined ? null : createAccessControl({ file: options.access, schema: () => engine.store.schema, logger, registry: metrics.registry });
  const apiKeys = access === null && options.apiKeys !== undefined && options.apiKeys.length > 0 ? createKeyCheck(options.apiKeys) : null;
  if (access !== null && options.apiKeys !== undefined && options.apiKeys.length > 0) {
    logger.warn({ access: options.access }, "--access replaces --api-keys-file and API_KEYS: the API keys are not used (give them to the policy's \"keys\" as SHA-256)");
  }
  const service = createService({
    engine: () => engine,
    maxPageSize: options.maxPageSize,
    logger,
    plugins: options.plugins,
    resource: options.resource,
    cors: options.cors ?? null,
    apiKeys,
    access,
    metrics,
    state: () => state,
    snapshotCreatedAt: () => createdAt,
  });
  const handlers = {
    routes: service.routes as never,
    fetch: service.fetch,
    // Every handler answers its own errors (envelope.ts); this is the last resort for Bun's.
    error(error: Error) {
      const requestId = crypto.randomUUID();
      logger.error({ err: error, requestId }, "unexpected error");
      return problemResponse("INTERNAL", `unexpected error; quote request id ${requestId}`, [], {}, { requestId });
    },
  };
  let server: Server<unknown>;
  if (options.listener !== undefined) {
    server = options.listener;
    server.reload(handlers);
  } else {
    server = Bun.serve({ ...bunListenOptions({ port: options.port, host: options.host, reusePort: options.reusePort }), ...handlers });
  }
  pending = () => server.pendingRequests;
  state = "ready";

  const reload = () => {
    let next: ReturnType<typeof load>;
    try {
      next = load();
    } catch (error) {
      metrics.reloaded("refused");
      throw error;
    }
    metrics.retireEngine(engine);
    engine = createEngine(next.store);
    loadMs = next.loadMs;
    createdAt = next.header.createdAt;
    metrics.reloaded("ok");
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

  let drained: Promise<void> | null = null;
  const drain = (): Promise<void> => {
    if (drained !== null) return drained;
    state = "draining";
    process.off("SIGHUP", onHup);
    const started = performance.now();
    const inFlight = server.pendingRequests;
    // Closes the listening socket and the idle keep-alive connections now; resolves once the
    // requests in flight are answered.
    const stopped = server.stop(false);
    logger.info({ inFlight }, "draining: new connections refused, finishing the requests in flight");
    drained = (async () => {
      const timedOut = await settlesWithin(stopped, DRAIN_TIMEOUT_MS);
      const unfinished = timedOut ? server.pendingRequests : 0;
      if (timedOut) await settlesWithin(server.stop(true), STEP_TIMEOUT_MS);
      logger.info({ ms: Math.round(performance.now() - started), unfinished }, "drained");
      // The log lines are written before the caller exits, in order.
      await settlesWithin(new Promise<void>((resolve) => logger.flush(() => resolve())), STEP_TIMEOUT_MS);
    })();
    return drained;
  };

  const url = listenUrl(options.host, server.port as number);
  const policy = access?.policy();
  logger.info({ cors: options.cors != null, apiKeys: apiKeys?.count ?? 0, ...(policy === undefined ? {} : { access: { file: policy.file, roles: policy.roles.size, keys: policy.keys.length, jwt: policy.jwt?.keys.kind ?? "none" } }) }, "HTTP envelope");
  logger.info({ url }, "listening");
  if (apiKeys === null && access === null && !isLoopbackHost(options.host)) {
    logger.warn({ host: options.host }, "listening beyond loopback without API keys: anyone who reaches this address reads the data (set --api-keys-file or API_KEYS)");
  }
  return {
    url,
    port: server.port as number,
    engine: () => engine,
    state: () => state,
    metrics,
    access,
    reload,
    drain,
    stop: async () => {
      process.off("SIGHUP", onHup);
      state = "draining";
      await server.stop(true);
    },
  };
}
