/**
 * The running service: loads a snapshot, serves the app on Bun, reloads the snapshot on SIGHUP
 * (a failed reload is logged and the old snapshot keeps serving), and drains on request
 * (docs/api.md "HTTP envelope", Operations: the caller wires SIGTERM and SIGINT to it).
 *
 * A reload never holds requests up: the new version's private copy is made and verified on an
 * I/O thread (io/threads.ts, under a time limit), and this thread only maps the verified copy
 * and swaps engines, in one step between two requests (docs/operations.md "Reloads").
 */
import type { Server } from "bun";
import type { Logger } from "pino";
import { type Engine, applyChanges, createEngine } from "./engine/execute.ts";
import { QueryScheduler } from "./engine/scheduler.ts";
import { carryVersions } from "./engine/view-version.ts";
import { type AccessControl, createAccessControl } from "./access/control.ts";
import { type ChangeBatch, compareLsn } from "./live/changes.ts";
import { type ChangeFeed, createChangeFeed } from "./events/change-feed.ts";
import { isLoopbackHost, createKeyCheck } from "./http/api-keys.ts";
import { type ServerState, adopt, createApp } from "./http/app.ts";
import type { CorsPolicy } from "./http/cors.ts";
import { PREFIX as METRIC_PREFIX, type ServerMetrics, createMetrics } from "./http/metrics.ts";
import { bunListenOptions, listenUrl } from "./http/listen.ts";
import { problemResponse } from "./service/responses.ts";
import type { Plugin } from "./http/routes.ts";
import { reasonOf } from "./files/errors.ts";
import type { FetchResult } from "./io/jobs.ts";
import { createPruner } from "./io/prune.ts";
import { BACKGROUND_NICE, DEFAULT_IO_TIMEOUT_MS, type FileThreads, createFileThreads } from "./io/threads.ts";
import { type ChangesTarget, type SourceStatus, publicSourceStatus } from "./publish/follow.ts";
import { SnapshotError } from "./snapshot/load.ts";
import { type PreparedCopy, type PrivatelyLoaded, defaultCacheDir, isMissingCopy, loadPrivately, mapPrepared } from "./snapshot/private-copy.ts";

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
  /**
   * The first snapshot, already prepared on an I/O thread (io/jobs.ts `prepare` or `fetch`):
   * mapped as it is. Absent: prepared on this thread (tests, library use).
   */
  prepared?: PreparedCopy;
  /**
   * A live table's first snapshot (publish/follow.ts `waitForFirst`): its LSN in the manifest
   * (shown on /healthz and /readyz from the start) and the change batches listed after it,
   * applied in order before the first request is answered, so that a replica that starts again
   * never serves the snapshot without the changes it served before. One that does not apply is
   * logged; the state before it serves and the follower tries it again (or reports why not).
   */
  live?: { snapshotLsn: string; batches: readonly ChangeBatch[] };
  /**
   * The snapshot file is a replica's own verified download (`serve --source`, or a worker of
   * one): linked into the cache instead of copied (snapshot/private-copy.ts `owned`).
   */
  owned?: boolean;
  /**
   * A replica's snapshot (`serve --source`, or a worker of one): its follower swaps versions in
   * with their change batches (publish/follow.ts), so SIGHUP does not reload the file — that
   * would serve a live snapshot without its batches — and re-reads the access policy only.
   */
  followed?: boolean;
  /** Remove other versions from the cache after each load (default true; a worker of `--source` leaves it to its supervisor). */
  prune?: boolean;
  /** Longest time a file operation of a reload may go without progress, in ms (default {@link DEFAULT_IO_TIMEOUT_MS}). */
  ioTimeoutMs?: number;
  /** The I/O threads reloads run on (default: the server's own, closed when it stops). */
  threads?: FileThreads;
  /** What the replica knows of its source (`serve --source`): shown on /healthz, /readyz and /metrics. */
  source?: () => SourceStatus | null;
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
  /** An expensive query still running after this many ms is answered 503 (docs/operations.md `--query-timeout-ms`); default 30000. */
  queryTimeoutMs?: number;
  /** Expensive queries that may wait to run; one more is answered 503 (docs/operations.md `--max-queued`); default 1024. */
  maxQueued?: number;
  /**
   * The access policy file (docs/api.md "Access control"): checked against the snapshot's
   * schema at start-up; when given, `apiKeys` is not used. Absent: access control off.
   */
  access?: string;
  /** Most change event streams open at once (docs/operations.md `--max-event-streams`); default 1000. */
  maxEventStreams?: number;
  /** Time between the event streams' keep-alive comments, in ms (default 15000; tests set it short). */
  eventKeepAliveMs?: number;
  /** Unread bytes an event stream may queue before its reader is dropped (default events/change-feed.ts `DEFAULT_MAX_QUEUED_BYTES`). */
  eventQueueBytes?: number;
}

/** A running server. */
export interface RunningServer {
  /** The bound URL, e.g. http://127.0.0.1:3000. */
  url: string;
  port: number;
  engine: () => Engine;
  /** "ready" while serving, "draining" once {@link RunningServer.drain} began. */
  state: () => ServerState;
  /**
   * A live table's change batches, applied to the served snapshot between requests
   * (docs/live-replicas.md §5): what a replica's follower drives (publish/follow.ts).
   */
  changes: ChangesTarget;
  metrics: ServerMetrics;
  /** The change events of `/api/<resource>/changes` (events/change-feed.ts). */
  events: ChangeFeed;
  /** The access control (its `reload` re-reads the policy: SIGHUP), or null when off. */
  access: AccessControl | null;
  /**
   * Loads the snapshot file again and swaps it in (SIGHUP): the copy is made and verified on an
   * I/O thread, then mapped and swapped here in one step; counted in the reload metric by
   * result. A reload asked for while one runs starts when it ends (one more at most).
   * @param fetched a replica's download, already verified and in the cache (publish/follow.ts)
   * @param batches a live table's batches listed after that snapshot: applied to it, one at a
   *   time between requests, before it is swapped in (the old state serves meanwhile), so that the
   *   state served never goes back to the snapshot's LSN
   * @param snapshotLsn the new snapshot's LSN (its manifest entry's), null or absent for one that
   *   is not live: when the new state reaches the LSN the old one had reached, the swap changed
   *   no row (a compaction): the change events say nothing, and the roles' version tokens are
   *   carried over (engine/view-version.ts `carryVersions`) instead of computed again
   * @throws (rejects) SnapshotError or IoError when the new file is refused, BatchError when a
   *   batch does not apply to it; the old snapshot keeps serving
   */
  reload: (fetched?: FetchResult, batches?: readonly ChangeBatch[], snapshotLsn?: string | null) => Promise<void>;
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
 * Maps a prepared copy; when another process pruned it in between, prepares it again here.
 * @throws as private-copy.ts `mapPrepared`
 */
function mapOrPrepare(prepared: PreparedCopy, again: () => PrivatelyLoaded): PrivatelyLoaded {
  try {
    return mapPrepared(prepared);
  } catch (error) {
    if (error instanceof SnapshotError && isMissingCopy(prepared.path)) return again();
    throw error;
  }
}

/**
 * Loads the snapshot and starts listening.
 * @throws SnapshotError when the snapshot is missing or refused; IoError when it cannot be
 *   read (a FIFO, no space for the copy…); PolicyError (access/policy.ts) when the access
 *   policy is refused; Error when the port cannot be bound or the resource name is invalid
 */
export function startServer(options: ServeOptions): RunningServer {
  const { logger } = options;
  let state: ServerState = "starting";
  const cacheDir = options.cacheDir ?? defaultCacheDir(options.snapshot);
  const ioTimeoutMs = options.ioTimeoutMs ?? DEFAULT_IO_TIMEOUT_MS;
  const threads = options.threads ?? createFileThreads({ nice: BACKGROUND_NICE });
  const ownThreads = options.threads === undefined;
  const loadHere = () => loadPrivately(options.snapshot, { verify: options.verify, cacheDir, owned: options.owned });
  let loaded: PrivatelyLoaded;
  try {
    loaded = options.prepared === undefined ? loadHere() : mapOrPrepare(options.prepared, loadHere);
  } catch (error) {
    if (ownThreads) threads.close();
    throw error;
  }
  const { prepared } = loaded;
  logger.info(
    {
      snapshot: options.snapshot,
      rows: loaded.store.rowCount,
      bytes: loaded.bytes,
      snapshotId: loaded.store.snapshotId,
      loadMs: Math.round(loaded.loadMs),
      copy: prepared.how,
      copyMs: Math.round(prepared.copyMs),
      verifyMs: Math.round(prepared.verifyMs),
    },
    "snapshot loaded",
  );
  if (prepared.how === "fallback") {
    logger.warn({ snapshot: options.snapshot, snapshotId: prepared.snapshotId, refused: prepared.refused }, "the snapshot file is refused; serving the verified cached copy of the same snapshot instead");
  }
  let engine = createEngine(loaded.store);
  for (const batch of options.live?.batches ?? []) {
    try {
      engine = applyChanges(engine, batch);
    } catch (error) {
      // the batches before it stay applied; the follower tries this one again at its polls
      logger.warn({ err: error, lsn: batch.lsn }, "a change batch listed after the snapshot does not apply at start-up; serving the state before it, the follower tries it again");
      break;
    }
  }
  // a live table's replica: the manifest's last LSN for the served snapshot, and since when a
  // published change waits to be applied (null: every published change is applied)
  let live: { snapshotLsn: string; pendingSince: number | null } | null = options.live === undefined ? null : { snapshotLsn: options.live.snapshotLsn, pendingSince: null };
  const changes: ChangesTarget = {
    lsn: () => (engine.live !== null && engine.live.sequence > 0 ? engine.live.lsn : null),
    apply: (batch: ChangeBatch) => {
      const started = performance.now();
      const prepared = events.prepare(engine, batch);
      engine = applyChanges(engine, batch);
      events.applied(prepared, engine);
      if (live !== null) live.pendingSince = null;
      logger.debug({ lsn: batch.lsn, changes: batch.changes.length, ms: Math.round((performance.now() - started) * 100) / 100 }, "applied a change batch");
    },
    published: (snapshotLsn, pendingSince) => {
      live = { snapshotLsn, pendingSince };
    },
  };
  const liveStatus = () => (live === null ? null : { lsn: changes.lsn() ?? live.snapshotLsn, lagSeconds: live.pendingSince === null ? 0 : Math.max(0, Math.round((Date.now() - live.pendingSince) / 100) / 10) });
  let loadMs = loaded.loadMs;
  let createdAt = loaded.header.createdAt;
  // A prune cut short by the server stopping is no failure.
  const pruner = createPruner(threads, cacheDir, ioTimeoutMs, logger, () => state === "draining");
  const prune = (keep: string) => {
    if (options.prune !== false) pruner.prune(keep);
  };
  prune(loaded.privatePath);

  // Bun's count of requests being answered; set once the server exists.
  let pending = () => 0;
  let scheduler: QueryScheduler | null = null;
  const metrics = createMetrics({
    inFlight: () => pending(),
    engine: () => engine,
    snapshot: () => ({ rows: engine.store.rowCount, snapshotId: engine.store.snapshotId, loadMs, createdAt }),
    queries: () => (scheduler as QueryScheduler).stats,
    source: options.source,
    hungIo: () => threads.hung().length,
    live: liveStatus,
  });
  scheduler = new QueryScheduler({ timeoutMs: options.queryTimeoutMs, maxQueued: options.maxQueued, observeWait: metrics.observeWait });
  const access = options.access === undefined ? null : createAccessControl({ file: options.access, schema: () => engine.store.schema, logger, registry: metrics.registry });
  const apiKeys = access === null && options.apiKeys !== undefined && options.apiKeys.length > 0 ? createKeyCheck(options.apiKeys) : null;
  if (access !== null && options.apiKeys !== undefined && options.apiKeys.length > 0) {
    logger.warn({ access: options.access }, "--access replaces --api-keys-file and API_KEYS: the API keys are not used (give them to the policy's \"keys\" as SHA-256)");
  }
  const events = createChangeFeed({ logger, maxStreams: options.maxEventStreams, keepAliveMs: options.eventKeepAliveMs, maxQueuedBytes: options.eventQueueBytes, registry: metrics.registry, metricPrefix: METRIC_PREFIX });
  const sourceStatus = options.source;
  const app = createApp({
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
    scheduler,
    changes: events,
    status:
      sourceStatus === undefined
        ? undefined
        : () => {
            const status = sourceStatus();
            const replication = liveStatus();
            return { ...(status === null ? {} : { source: publicSourceStatus(status) }), ...(replication === null ? {} : replication) };
          },
  });
  let server: Server<unknown>;
  if (options.listener !== undefined) {
    server = options.listener;
    adopt(app, server);
  } else {
    app.listen({
      ...bunListenOptions({ port: options.port, host: options.host, reusePort: options.reusePort }),
      // Every handler answers its own errors (envelope.ts); this is the last resort for Bun's.
      error(error: Error) {
        const requestId = crypto.randomUUID();
        logger.error({ err: error, requestId }, "unexpected error");
        return problemResponse("INTERNAL", `unexpected error; quote request id ${requestId}`, [], {}, { requestId });
      },
    });
    server = app.server as Server<unknown>;
  }
  pending = () => server.pendingRequests;
  state = "ready";

  /** One reload: prepare on an I/O thread, then map and swap here. */
  const reloadOnce = async (fetched?: FetchResult, batches: readonly ChangeBatch[] = [], snapshotLsn: string | null = null): Promise<void> => {
    const started = performance.now();
    let next: PrivatelyLoaded;
    let swapMs: number;
    try {
      const ready =
        fetched?.prepared ??
        (await threads.run(
          { kind: "prepare", source: options.snapshot, cacheDir, verify: options.verify !== false, owned: options.owned === true, fallback: false },
          { timeoutMs: ioTimeoutMs, label: `copying and verifying ${options.snapshot} into ${cacheDir}` },
        ));
      // From here to the swap, this thread maps the verified copy: no request waits on the disk.
      const mapStarted = performance.now();
      next = mapOrPrepare(ready, loadHere);
      // a copy pruned meanwhile is prepared again from the file, which may hold a later
      // version by then: the batches given are the named version's only
      if (fetched !== undefined && next.store.snapshotId !== fetched.prepared.snapshotId) {
        throw new SnapshotError(options.snapshot, `holds snapshot ${next.store.snapshotId} now, not ${fetched.prepared.snapshotId} (a newer version arrived meanwhile)`);
      }
      let fresh = createEngine(next.store);
      swapMs = performance.now() - mapStarted;
      // a live table's batches, each applied between requests (the old state serves meanwhile)
      for (const batch of batches) {
        await new Promise((resolve) => setImmediate(resolve));
        const t = performance.now();
        fresh = applyChanges(fresh, batch);
        swapMs += performance.now() - t;
      }
      metrics.retireEngine(engine);
      // the position each state has reached: equal for a compaction (no row changed)
      const reached = changes.lsn() ?? live?.snapshotLsn ?? null;
      const reaches = batches.length > 0 ? batches[batches.length - 1].lsn : snapshotLsn;
      const before = engine;
      const rowsChanged = reached === null || reaches === null || compareLsn(reached, reaches) !== 0;
      // the same rows (a compaction): the roles' version tokens carry over, none hashed again
      if (!rowsChanged) carryVersions(before, fresh);
      engine = fresh;
      if (live !== null && snapshotLsn !== null) live.snapshotLsn = snapshotLsn;
      events.swapped(before, fresh, rowsChanged);
    } catch (error) {
      metrics.reloaded("refused");
      throw error;
    }
    loadMs = performance.now() - started;
    createdAt = next.header.createdAt;
    metrics.reloaded("ok");
    // The previous copy stays mapped until its engine is collected: its file goes after that.
    prune(next.privatePath);
    logger.info(
      {
        rows: next.store.rowCount,
        snapshotId: next.store.snapshotId,
        loadMs: Math.round(loadMs),
        copy: next.prepared.how,
        copyMs: Math.round(next.prepared.copyMs),
        verifyMs: Math.round(next.prepared.verifyMs),
        swapMs: Math.round(swapMs * 10) / 10,
      },
      "snapshot reloaded",
    );
  };
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  const reload = (fetched?: FetchResult, batches?: readonly ChangeBatch[], snapshotLsn?: string | null): Promise<void> => {
    if (running === null) {
      running = reloadOnce(fetched, batches, snapshotLsn ?? null).finally(() => {
        running = null;
      });
      return running;
    }
    queued ??= running
      .catch(() => {})
      .then(() => {
        queued = null;
        return reload(fetched, batches, snapshotLsn);
      });
    return queued;
  };
  const onHup = () => {
    if (options.followed === true) return;
    logger.info({ snapshot: options.snapshot }, "reloading the snapshot (SIGHUP)");
    reload().catch((error: unknown) => {
      logger.error({ err: error, reason: reasonOf(error), snapshot: options.snapshot }, "reload failed; still serving the previous snapshot");
    });
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
    // every event stream ends now (its requests would otherwise hold the drain to its limit)
    events.close();
    logger.info({ inFlight }, "draining: new connections refused, finishing the requests in flight");
    drained = (async () => {
      const timedOut = await settlesWithin(stopped, DRAIN_TIMEOUT_MS);
      const unfinished = timedOut ? server.pendingRequests : 0;
      if (timedOut) await settlesWithin(server.stop(true), STEP_TIMEOUT_MS);
      pruner.stop();
      if (ownThreads) threads.close();
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
    changes,
    metrics,
    events,
    access,
    reload,
    drain,
    stop: async () => {
      process.off("SIGHUP", onHup);
      state = "draining";
      events.close();
      await server.stop(true);
      pruner.stop();
      if (ownThreads) threads.close();
    },
  };
}
