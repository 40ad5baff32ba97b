/**
 * The metrics of one server (docs/api.md "HTTP envelope", Operations: `GET /metrics`), in the
 * Prometheus text format by prom-client, on a registry of the server's own (not prom-client's
 * global one, so that several servers live in one process). Request durations are counted per
 * request into plain arrays ({@link DurationHistogram}: prom-client's `observe` builds label
 * objects and a label hash string per call, a few percent of a cheap request); everything else
 * is read when scraped, from plain numbers (collect callbacks).
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Engine } from "../engine/execute.ts";
import type { SchedulerStats } from "../engine/scheduler.ts";
import { IO_REASONS } from "../files/errors.ts";
import { type SourceStatus, stalenessSeconds } from "../publish/follow.ts";
import { lsnValue } from "../live/changes.ts";

/** Metric names' common prefix. */
/** Prefix of every metric name this server exports. */
export const PREFIX = "users_listing_";

/**
 * Request duration buckets, in seconds: from 0.25 ms (a cheap page) to 2.5 s (a queued
 * substring search under load).
 */
const DURATION_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Methods kept as label values; any other is "other" (bounded label values). */
const METHODS = new Set(["GET", "HEAD", "POST", "OPTIONS", "PUT", "DELETE", "PATCH"]);

/** What the metrics read when scraped. */
export interface MetricsSources {
  /** Requests being answered now (Bun's `server.pendingRequests`), the scrape itself included. */
  inFlight: () => number;
  /** The engine serving now (its caches' counters and sizes). */
  engine: () => Engine;
  /** The snapshot serving now: rows, id, and how long loading it took, in ms. */
  snapshot: () => { rows: number; snapshotId: string; loadMs: number; createdAt?: string };
  /** The query scheduler's counts and queue (engine/scheduler.ts), or absent when none is known. */
  queries?: () => SchedulerStats;
  /** A replica's source (`serve --source`): its polls and staleness; absent or null: not a replica. */
  source?: () => SourceStatus | null;
  /** File operations abandoned on a time-out whose thread has not returned (io/threads.ts). */
  hungIo?: () => number;
  /** A live table's replica: the LSN its state reached and its lag (docs/live-replicas.md); null when not live. */
  live?: () => { lsn: string; lagSeconds: number } | null;
}

/** One server's metrics. */
export interface ServerMetrics {
  registry: Registry;
  /**
   * Records one answered request.
   * @param route the route template (`/api/users`), or "other" for a path no route serves
   * @param seconds from the request's arrival to its response, in seconds
   */
  observe: (route: string, method: string, status: number, seconds: number) => void;
  /** Counts a reload by its result: "ok", or "refused" (the old snapshot kept serving). */
  reloaded: (result: "ok" | "refused") => void;
  /**
   * Records how long an expensive query waited in the scheduler's queue before it started
   * (engine/scheduler.ts `observeWait`).
   * @param seconds from its submission to its start, in seconds
   */
  observeWait: (seconds: number) => void;
  /**
   * Keeps the cache counters of an engine about to be replaced (a reload), so that the
   * `_total` counters never go backwards.
   */
  retireEngine: (engine: Engine) => void;
  /** The exposition: body text and its content type. */
  exposition: () => Promise<{ body: string; contentType: string }>;
}

/** One series of the duration histogram: counts per bucket (not cumulative), sum and count. */
interface DurationSeries {
  labels: { route: string; method: string; status: string };
  /** Observations per bucket of DURATION_BUCKETS, the last one for +Inf. */
  buckets: Float64Array;
  /** Sum of the observed durations, in seconds. */
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram of request durations by route, method and status, in the shape
 * prom-client's registry reads from a metric (`name`, `help`, `type`, `get()`): observing finds
 * its series in nested maps and adds to numbers, allocating nothing once the series exists.
 * The series are bounded: routes are templates or "other", methods a fixed set, statuses few.
 */
class DurationHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly series = new Map<string, Map<string, Map<number, DurationSeries>>>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** Adds one observation of `seconds`. */
  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.series.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.series.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let series = byStatus.get(status);
    if (series === undefined) {
      series = { labels: { route, method, status: String(status) }, buckets: new Float64Array(DURATION_BUCKETS.length + 1), sum: 0, count: 0 };
      byStatus.set(status, series);
    }
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]) i++;
    series.buckets[i]++;
    series.sum += seconds;
    series.count++;
  }

  /** The values as prom-client's registry formats them: cumulative buckets, +Inf, sum, count. */
  async get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const byMethod of this.series.values()) {
      for (const byStatus of byMethod.values()) {
        for (const s of byStatus.values()) {
          let cumulative = 0;
          for (let i = 0; i < DURATION_BUCKETS.length; i++) {
            cumulative += s.buckets[i];
            values.push({ labels: { le: DURATION_BUCKETS[i], ...s.labels }, value: cumulative, metricName: `${this.name}_bucket` });
          }
          values.push({ labels: { le: "+Inf", ...s.labels }, value: s.count, metricName: `${this.name}_bucket` });
          values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
          values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
        }
      }
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

/** Caches reported, by label value. */
const CACHES = ["filters", "orders"] as const;

/** Creates the metrics of one server on a registry of its own. */
export function createMetrics(sources: MetricsSources): ServerMetrics {
  const registry = new Registry();
  const registers = [registry];
  const duration = new DurationHistogram(
    `${PREFIX}http_request_duration_seconds`,
    "Time from a request's arrival to its response, in seconds, by route template, method and status.",
  );
  registry.registerMetric(duration as never);
  new Gauge({
    name: `${PREFIX}http_requests_in_flight`,
    help: "Requests being answered now.",
    registers,
    collect() {
      this.set(sources.inFlight());
    },
  });

  // Cache counters of engines replaced by reloads, added to the serving engine's.
  const retired = { filters: { hits: 0, misses: 0 }, orders: { hits: 0, misses: 0 } };
  const cacheCounter = (what: "hits" | "misses", help: string) =>
    new Counter({
      name: `${PREFIX}cache_${what}_total`,
      help,
      labelNames: ["cache"] as const,
      registers,
      collect() {
        const engine = sources.engine();
        this.reset();
        for (const cache of CACHES) this.inc({ cache }, retired[cache][what] + engine[cache][what]);
      },
    });
  cacheCounter("hits", "Engine cache lookups that found the filter result or ordered list, by cache.");
  cacheCounter("misses", "Engine cache lookups that had to compute it, by cache.");
  new Gauge({
    name: `${PREFIX}cache_bytes`,
    help: "Bytes held by the engine's caches, by cache.",
    labelNames: ["cache"] as const,
    registers,
    collect() {
      const engine = sources.engine();
      for (const cache of CACHES) this.set({ cache }, engine[cache].bytes);
    },
  });
  new Gauge({
    name: `${PREFIX}snapshot_rows`,
    help: "Rows in the snapshot serving now.",
    registers,
    collect() {
      this.set(sources.snapshot().rows);
    },
  });
  new Gauge({
    name: `${PREFIX}snapshot_info`,
    help: "The snapshot serving now: its id as a label, value 1.",
    labelNames: ["snapshot_id"] as const,
    registers,
    collect() {
      this.reset();
      this.set({ snapshot_id: sources.snapshot().snapshotId }, 1);
    },
  });
  new Gauge({
    name: `${PREFIX}snapshot_created_timestamp_seconds`,
    help: "When the snapshot serving now was built, in seconds since the Unix epoch (its age: time() minus this).",
    registers,
    collect() {
      const createdAt = sources.snapshot().createdAt;
      if (createdAt !== undefined) this.set(Date.parse(createdAt) / 1000);
    },
  });
  new Gauge({
    name: `${PREFIX}snapshot_age_seconds`,
    help: "Seconds since the snapshot serving now was built.",
    registers,
    collect() {
      const createdAt = sources.snapshot().createdAt;
      if (createdAt !== undefined) this.set(Math.max(0, (Date.now() - Date.parse(createdAt)) / 1000));
    },
  });
  new Gauge({
    name: `${PREFIX}snapshot_load_seconds`,
    help: "How long loading the snapshot serving now took, in seconds.",
    registers,
    collect() {
      this.set(sources.snapshot().loadMs / 1000);
    },
  });
  const reloads = new Counter({
    name: `${PREFIX}snapshot_reloads_total`,
    help: 'Snapshot reloads (SIGHUP) by result: "ok", or "refused" (the previous snapshot kept serving).',
    labelNames: ["result"] as const,
    registers,
  });
  reloads.inc({ result: "ok" }, 0);
  reloads.inc({ result: "refused" }, 0);
  new Gauge({
    name: `${PREFIX}io_hung_operations`,
    help: "File or storage operations abandoned after their time limit whose thread has not returned yet (a hung mount or endpoint).",
    registers,
    collect() {
      this.set(sources.hungIo?.() ?? 0);
    },
  });
  if (sources.source !== undefined) sourceMetrics(registers, sources.source);
  if (sources.live !== undefined) {
    const live = sources.live;
    new Gauge({
      name: `${PREFIX}replication_lsn`,
      help: "The LSN a live replica's state has reached (the last change batch applied, or its snapshot's), as a number: high 32 bits × 2^32 + low 32 bits.",
      registers,
      collect() {
        const status = live();
        this.set(status === null ? 0 : lsnValue(status.lsn));
      },
    });
    new Gauge({
      name: `${PREFIX}replication_lag_seconds`,
      help: "Seconds from the commit of the oldest change the replica has not applied yet to now (0 when it has applied every published change).",
      registers,
      collect() {
        this.set(live()?.lagSeconds ?? 0);
      },
    });
  }

  // The query scheduler (docs/operations.md "Fair under load"): read when scraped.
  const queries = sources.queries ?? null;
  new Gauge({
    name: `${PREFIX}queries_queued`,
    help: "Expensive queries waiting to start in the scheduler's queue (at most --max-queued).",
    registers,
    collect() {
      this.set(queries?.().queued ?? 0);
    },
  });
  new Gauge({
    name: `${PREFIX}queries_running`,
    help: "Expensive queries started and not finished: run in turn, a slice at a time, between the other requests.",
    registers,
    collect() {
      this.set(queries?.().running ?? 0);
    },
  });
  const stopped = (name: string, help: string, read: (stats: SchedulerStats) => number) =>
    new Counter({
      name: `${PREFIX}queries_${name}_total`,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(queries === null ? 0 : read(queries()));
      },
    });
  stopped("cancelled", "Expensive queries stopped because their client went away (no more work spent on them).", (q) => q.cancelled);
  stopped("timed_out", "Expensive queries stopped by --query-timeout-ms (answered 503 query_timeout).", (q) => q.timedOut);
  stopped("refused", "Expensive queries refused because --max-queued were already waiting (answered 503 overloaded).", (q) => q.refused);
  stopped("completed", "Expensive queries the scheduler ran to their end.", (q) => q.completed);
  const waits = new Histogram({
    name: `${PREFIX}query_wait_seconds`,
    help: "Time expensive queries waited in the scheduler's queue before they started, in seconds.",
    buckets: DURATION_BUCKETS,
    registers,
  });

  return {
    registry,
    observe(route, method, status, seconds) {
      duration.observe(route, METHODS.has(method) ? method : "other", status, seconds);
    },
    reloaded(result) {
      reloads.inc({ result });
    },
    observeWait(seconds) {
      waits.observe(seconds);
    },
    retireEngine(engine) {
      for (const cache of CACHES) {
        retired[cache].hits += engine[cache].hits;
        retired[cache].misses += engine[cache].misses;
      }
    },
    async exposition() {
      return { body: await registry.metrics(), contentType: registry.contentType };
    },
  };
}

/**
 * The metrics of a replica's source (docs/operations.md "When things go wrong"): polls by
 * result and failures by reason (io errors' bounded reasons), whether the last poll succeeded,
 * failures in a row, when a poll last succeeded, and staleness: seconds since the replica last
 * saw that it serves the published version (alert on this one).
 */
function sourceMetrics(registers: Registry[], source: () => SourceStatus | null): void {
  new Counter({
    name: `${PREFIX}source_polls_total`,
    help: 'Polls of the source (serve --source) by result: "ok" or "failed".',
    labelNames: ["result"] as const,
    registers,
    collect() {
      const status = source();
      this.reset();
      let failed = 0;
      for (const n of Object.values(status?.polls.failed ?? {})) failed += n ?? 0;
      this.inc({ result: "ok" }, status?.polls.ok ?? 0);
      this.inc({ result: "failed" }, failed);
    },
  });
  new Counter({
    name: `${PREFIX}source_poll_failures_total`,
    help: "Failed polls of the source by reason (timeout, hung, missing_location, not_published, not_a_file, no_space, unreachable, denied, checksum, refused, bad_manifest, io, storage).",
    labelNames: ["reason"] as const,
    registers,
    collect() {
      const failed = source()?.polls.failed ?? {};
      this.reset();
      for (const reason of IO_REASONS) this.inc({ reason }, failed[reason] ?? 0);
    },
  });
  new Gauge({
    name: `${PREFIX}source_last_poll_success`,
    help: "1 when the last poll of the source succeeded, 0 when it failed (its reason: source_poll_failures_total, and the log).",
    registers,
    collect() {
      const last = source()?.lastPoll;
      this.set(last?.result === "ok" ? 1 : 0);
    },
  });
  new Gauge({
    name: `${PREFIX}source_consecutive_failures`,
    help: "Polls of the source that failed since the last one that succeeded.",
    registers,
    collect() {
      this.set(source()?.consecutiveFailures ?? 0);
    },
  });
  new Gauge({
    name: `${PREFIX}source_last_success_timestamp_seconds`,
    help: "When a poll of the source last succeeded, in seconds since the Unix epoch (0: never).",
    registers,
    collect() {
      const at = source()?.lastSuccessAt;
      this.set(at == null ? 0 : Date.parse(at) / 1000);
    },
  });
  new Gauge({
    name: `${PREFIX}source_staleness_seconds`,
    help: "Seconds since the replica last saw that it serves the version its source publishes (since it started, before that).",
    registers,
    collect() {
      const status = source();
      this.set(status === null ? 0 : stalenessSeconds(status));
    },
  });
}
