/**
 * Keeps expensive queries from stalling cheap ones on the one JavaScript thread.
 *
 * A query whose plan the planner prices above DEFER_ABOVE (planner.ts: an uncached substring
 * needle, a scan, a large gather-sort: 0.1–10 ms at 10M rows) is queued here instead of run at once; the queue runs jobs for at
 * most {@link SLICE_MS} per event-loop turn, then yields, so that requests read in the meantime
 * — cheap ones are answered synchronously as they arrive — wait for one slice at most, not for
 * every expensive query ahead of them. Throughput is unchanged: the same work runs, in order.
 */

/** Longest run of queued jobs in one event-loop turn, in milliseconds. */
export const SLICE_MS = 1;

/** A queued job and how to settle its promise. */
interface Job {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * A FIFO of jobs run between event-loop turns (`sliceMs` per turn at most, {@link SLICE_MS} by
 * default; a job longer than that runs alone in its turn).
 */
export class DeferredQueue {
  private jobs: (Job | undefined)[] = [];
  private head = 0;
  private scheduled = false;

  /** @param sliceMs the longest run of jobs in one event-loop turn, in milliseconds */
  constructor(private readonly sliceMs: number = SLICE_MS) {}

  /** Jobs waiting, in jobs. */
  get length(): number {
    return this.jobs.length - this.head;
  }

  /**
   * Queues `job` and resolves with its result (or rejects with what it throws) once it has run.
   */
  run<T>(job: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.jobs.push({ run: job, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.length === 0) return;
    this.scheduled = true;
    setImmediate(this.drain);
  }

  private drain = (): void => {
    this.scheduled = false;
    const started = performance.now();
    do {
      const job = this.jobs[this.head] as Job;
      this.jobs[this.head++] = undefined;
      try {
        job.resolve(job.run());
      } catch (error) {
        job.reject(error);
      }
    } while (this.length > 0 && performance.now() - started < this.sliceMs);
    if (this.length === 0) {
      this.jobs = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.jobs = this.jobs.slice(this.head);
      this.head = 0;
    }
    this.schedule();
  };
}

