/**
 * Keeps expensive queries from holding cheap ones back on the one JavaScript thread
 * (docs/api.md "Fair under load"; docs/operations.md "Fair under load").
 *
 * A query whose plan the planner prices above DEFER_ABOVE (planner.ts: a search of frequent
 * terms, a scan, a large gather-sort) is not run at once: it is submitted here as work that
 * pauses between pieces (bits/work.ts), and the scheduler runs the queries' work at most
 * {@link SLICE_MS} per event-loop turn, then lets the loop read and answer what arrived in the
 * meantime (cheap requests are answered synchronously as they arrive). So a cheap request waits
 * for one slice at most, never for a whole expensive query; the expensive ones share the rest.
 *
 * - Up to {@link MAX_RUNNING} queries run at once, in turn, each for a share of the slice; the
 *   others wait, first come first served, holding nothing but their plan.
 * - A query submitted while `maxQueued` others wait is refused at once ({@link QueryStopped}
 *   `overloaded`): memory never grows with the queue.
 * - A query still running (or waiting) `timeoutMs` after it was submitted is stopped
 *   (`timeout`): its work is ended where it paused and nothing more is spent on it.
 * - A query whose signal aborts (its client went away) is stopped the same way (`cancelled`).
 *
 * The work of a query holds the engine version it was planned on: whatever the server applies
 * or loads meanwhile, the query answers from the state (and with the filter) it started with.
 */
import type { Work } from "../bits/work.ts";

/** Longest run of queries' work in one event-loop turn, in milliseconds. */
export const SLICE_MS = 1;

/** Queries that run at once, in turn; the others wait to start. */
export const MAX_RUNNING = 4;

/** Default of `maxQueued` (docs/operations.md: `--max-queued`, `MAX_QUEUED`). */
export const DEFAULT_MAX_QUEUED = 1024;

/** Default of `timeoutMs`, in ms (docs/operations.md: `--query-timeout-ms`, `QUERY_TIMEOUT_MS`). */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/** Why a query was stopped before it finished. */
export type StopReason = "timeout" | "overloaded" | "cancelled";

/** A query the scheduler did not finish: refused, timed out or cancelled. */
export class QueryStopped extends Error {
  /** @param reason what stopped it */
  constructor(readonly reason: StopReason) {
    super(reason === "timeout" ? "the query ran out of time" : reason === "overloaded" ? "too many queries are waiting" : "the client went away");
    this.name = "QueryStopped";
  }
}

/** Options of a {@link QueryScheduler}. */
export interface SchedulerOptions {
  /** Longest run of work in one event-loop turn, in ms; default {@link SLICE_MS}. */
  sliceMs?: number;
  /** Queries that may wait to start; one more is refused. Default {@link DEFAULT_MAX_QUEUED}. */
  maxQueued?: number;
  /** A query is stopped this many ms after it was submitted; default {@link DEFAULT_QUERY_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Queries run at once; default {@link MAX_RUNNING}. */
  maxRunning?: number;
  /** Told, in seconds, how long each query waited before it started (the metrics' histogram). */
  observeWait?: (seconds: number) => void;
}

/** What the scheduler has done since it was made, and holds now (the metrics read it). */
export interface SchedulerStats {
  /** Queries waiting to start, now. */
  queued: number;
  /** Queries started and not finished, now. */
  running: number;
  /** Queries that finished (or failed with an error of their own). */
  completed: number;
  /** Queries stopped because their client went away. */
  cancelled: number;
  /** Queries stopped by the timeout. */
  timedOut: number;
  /** Queries refused because the queue was full. */
  refused: number;
}

/** A submitted query. */
interface Job {
  /** Makes the work when the job starts; dropped once it is settled (nothing of a stopped query is kept). */
  make: (() => Work<unknown>) | null;
  work: Work<unknown> | null;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  submitted: number;
  deadline: number;
  signal: AbortSignal | null;
  onAbort: (() => void) | null;
  /** Waiting to start, running, or settled (then skipped wherever it still is). */
  state: "waiting" | "running" | "settled";
}

/** Runs submitted queries' work in slices between event-loop turns (see the module comment). */
export class QueryScheduler {
  private readonly waiting: Job[] = [];
  private waitingHead = 0;
  /** Jobs in `waiting` not yet settled. */
  private queued = 0;
  private readonly running: Job[] = [];
  private next = 0;
  private scheduled = false;
  private readonly sliceMs: number;
  private readonly maxQueued: number;
  private readonly maxRunning: number;
  /** Milliseconds after submission at which a query is stopped. */
  readonly timeoutMs: number;
  private readonly observeWait: ((seconds: number) => void) | null;
  private counts = { completed: 0, cancelled: 0, timedOut: 0, refused: 0 };

  /** @throws RangeError for a limit that is not a positive integer (the CLI checks first) */
  constructor(options: SchedulerOptions = {}) {
    this.sliceMs = options.sliceMs ?? SLICE_MS;
    this.maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    this.maxRunning = options.maxRunning ?? MAX_RUNNING;
    this.observeWait = options.observeWait ?? null;
    for (const [name, value] of [
      ["maxQueued", this.maxQueued],
      ["timeoutMs", this.timeoutMs],
      ["maxRunning", this.maxRunning],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < (name === "maxQueued" ? 0 : 1)) throw new RangeError(`${name} must be a positive integer (got ${value})`);
    }
  }

  /** Counts and the queue's length now. */
  get stats(): SchedulerStats {
    return { queued: this.queued, running: this.running.length, ...this.counts };
  }

  /**
   * Submits a query: `make()` is called when it starts, and its work run slice by slice.
   * Resolves with the work's result; rejects with what it throws, or with {@link QueryStopped}
   * when it is refused (the queue holds `maxQueued` waiting queries), times out, or `signal`
   * aborts (then nothing more of it runs).
   */
  submit<T>(make: () => Work<T>, signal: AbortSignal | null = null): Promise<T> {
    if (signal?.aborted) {
      this.counts.cancelled++;
      return Promise.reject(new QueryStopped("cancelled"));
    }
    // the queued ones that free running places will take at the next turn are not waiting
    if (this.queued - Math.max(0, this.maxRunning - this.running.length) >= this.maxQueued) {
      this.counts.refused++;
      return Promise.reject(new QueryStopped("overloaded"));
    }
    return new Promise<T>((resolve, reject) => {
      const now = performance.now();
      const job: Job = { make, work: null, resolve: resolve as (value: unknown) => void, reject, submitted: now, deadline: now + this.timeoutMs, signal, onAbort: null, state: "waiting" };
      if (signal !== null) {
        job.onAbort = () => this.stop(job, "cancelled");
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.waiting.push(job);
      this.queued++;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || (this.running.length === 0 && this.queued === 0)) return;
    this.scheduled = true;
    setImmediate(this.turn);
  }

  /** Settles a job: detached from its signal, its work ended where it paused. */
  private settle(job: Job): void {
    if (job.state === "waiting") this.queued--;
    job.state = "settled";
    job.make = null;
    if (job.signal !== null && job.onAbort !== null) job.signal.removeEventListener("abort", job.onAbort);
    const index = this.running.indexOf(job);
    if (index >= 0) this.running.splice(index, 1);
  }

  /** Stops a job for `reason` (its work is not resumed again). */
  private stop(job: Job, reason: StopReason): void {
    if (job.state === "settled") return;
    this.settle(job);
    if (reason === "cancelled") this.counts.cancelled++;
    else this.counts.timedOut++;
    const work = job.work;
    job.work = null;
    try {
      work?.return(undefined);
    } catch {
      // its own cleanup failed: nothing more to do, it is stopped either way
    }
    job.reject(new QueryStopped(reason));
  }

  /** Drops settled jobs from the head of the queue (a cancelled job waits there, settled, until reached), and the queue's dead prefix when it grows. */
  private compactWaiting(): void {
    while (this.waitingHead < this.waiting.length && this.waiting[this.waitingHead].state === "settled") this.waitingHead++;
    if (this.waitingHead === this.waiting.length) {
      this.waiting.length = 0;
      this.waitingHead = 0;
    } else if (this.waitingHead > 1024) {
      this.waiting.splice(0, this.waitingHead);
      this.waitingHead = 0;
    }
  }

  /** Starts waiting jobs while fewer than `maxRunning` run; stops the waiting ones past their deadline. */
  private startWaiting(now: number): void {
    while (this.waitingHead < this.waiting.length) {
      const job = this.waiting[this.waitingHead];
      if (job.state === "settled") {
        this.waitingHead++;
        continue;
      }
      if (now >= job.deadline) {
        this.waitingHead++;
        this.stop(job, "timeout");
        continue;
      }
      // waiting jobs all share one timeout: the ones behind this one are within theirs too
      if (this.running.length >= this.maxRunning) break;
      this.waitingHead++;
      this.queued--;
      job.state = "running";
      this.observeWait?.((now - job.submitted) / 1000);
      try {
        job.work = (job.make as () => Work<unknown>)();
      } catch (error) {
        this.settle(job);
        this.counts.completed++;
        job.reject(error);
        continue;
      }
      this.running.push(job);
    }
    this.compactWaiting();
  }

  /** One event-loop turn's slice: the running jobs in turn, each for a share, until the slice is used. */
  private turn = (): void => {
    this.scheduled = false;
    const started = performance.now();
    let now = started;
    this.startWaiting(now);
    while (this.running.length > 0 && now - started < this.sliceMs) {
      if (this.next >= this.running.length) this.next = 0;
      const job = this.running[this.next];
      if (now >= job.deadline) {
        this.stop(job, "timeout");
      } else {
        const until = now + this.sliceMs / this.running.length;
        const work = job.work as Work<unknown>;
        try {
          let step = work.next();
          while (step.done !== true && job.state === "running" && performance.now() < until) step = work.next();
          if (step.done === true && job.state === "running") {
            this.settle(job);
            this.counts.completed++;
            job.resolve(step.value);
          } else this.next++;
        } catch (error) {
          if (job.state === "running") {
            this.settle(job);
            this.counts.completed++;
            job.reject(error);
          }
        }
      }
      now = performance.now();
      this.startWaiting(now);
    }
    this.schedule();
  };
}
