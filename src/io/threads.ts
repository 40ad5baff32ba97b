/**
 * I/O threads: every read and write of a snapshot source, the cache directory and a published
 * location runs on a thread of its own (a Bun Worker running io/worker.ts), never on the thread
 * that answers requests, and under a watchdog. A job reports progress as it goes (bytes copied,
 * downloaded, hashed); one that makes no progress within its time limit is abandoned: its
 * promise rejects with an IoError `timeout` naming the operation and the location, and its
 * thread is terminated (a thread blocked in the kernel, on a hung NFS mount say, ends when the
 * kernel call returns). Until then it counts as hung; while {@link DEFAULT_MAX_HUNG} are,
 * no new job starts (each is refused at once with IoError `hung`), so a location that hangs
 * every read cannot pile up threads.
 *
 * Why threads of our own: the runtime's asynchronous file calls share a pool of as many threads
 * as the machine has cores, and two reads hung on a FIFO or a dead mount block every later file
 * call of the process. And a copy or verification of a large snapshot is seconds of work that a
 * request must not wait behind.
 */
import { IoError } from "../files/errors.ts";
import { SnapshotError } from "../snapshot/load.ts";
import type { Job, JobResult } from "./jobs.ts";

/**
 * Default longest time a file or storage operation may go without progress, in ms (`serve
 * --io-timeout`, docs/operations.md): a hung mount or endpoint is reported after this long.
 */
export const DEFAULT_IO_TIMEOUT_MS = 30_000;

/** Threads abandoned on a time-out and still alive, beyond which no new job starts. */
export const DEFAULT_MAX_HUNG = 4;

/** Idle threads kept for the next job (a thread's start costs tens of ms). */
const MAX_IDLE = 1;

/** A job's progress message: bytes done, and how long the next step may stay silent, in ms. */
export interface ProgressMessage {
  id: number;
  progress: number;
  quietMs?: number;
}

/** An error as it crosses threads. */
export interface SerializedError {
  name: string;
  message: string;
  reason?: string;
  file?: string;
  snapshotReason?: string;
}

/** What a worker posts back: progress, a result, or an error. */
export type WorkerReply = ProgressMessage | { id: number; result: unknown } | { id: number; error: SerializedError };

/** An error made cloneable for postMessage (keeps IoError's reason and SnapshotError's file). */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof SnapshotError) return { name: error.name, message: error.message, file: error.file, snapshotReason: error.reason };
  if (error instanceof IoError) return { name: error.name, message: error.message, reason: error.reason };
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: "Error", message: String(error) };
}

/** The error {@link serializeError} described, rebuilt on this thread. */
export function deserializeError(data: SerializedError): Error {
  if (data.name === "SnapshotError" && data.file !== undefined) return new SnapshotError(data.file, data.snapshotReason ?? data.message);
  if (data.name === "IoError") return new IoError((data.reason as IoError["reason"]) ?? "io", data.message);
  const error = new Error(data.message);
  error.name = data.name;
  return error;
}

/** How a job runs. */
export interface RunOptions {
  /** Longest time without progress before the job is abandoned, in ms. */
  timeoutMs: number;
  /** The operation and its location, for messages: "reading manifest.json from s3://… (endpoint …)". */
  label: string;
}

/** The I/O threads of one process. */
export interface FileThreads {
  /**
   * Runs `job` on an I/O thread.
   * @throws IoError `timeout` when it makes no progress within `timeoutMs` (it is abandoned),
   *   `hung` when too many abandoned jobs have not returned; the job's own errors
   */
  run<J extends Job>(job: J, options: RunOptions): Promise<JobResult<J>>;
  /** Abandoned jobs whose thread has not returned yet, oldest first: their labels and since when (ms epoch). */
  hung(): { label: string; since: number }[];
  /** Terminates every thread (idle, busy and hung); later runs start new ones. */
  close(): void;
}

/** Options of {@link createFileThreads}. */
export interface FileThreadsOptions {
  /** The worker script (default io/worker.ts); tests give one of their own. */
  workerUrl?: string;
  /** See {@link DEFAULT_MAX_HUNG}. */
  maxHung?: number;
  /**
   * The threads' nice value (Linux, per thread), e.g. {@link BACKGROUND_NICE} for the work of a
   * server that is answering requests; absent: the process's priority (start-up).
   */
  nice?: number;
}

/**
 * The nice value of the I/O threads of a serving process: below the thread that answers
 * requests (0), so that on a busy machine a reload's copy and verification wait for the CPU,
 * not a request (they take longer; requests keep their latency).
 */
export const BACKGROUND_NICE = 10;

/** io/worker.ts, where the worker is loaded from: the source tree, or the compiled binary's bundle. */
function workerSpecifier(): string {
  if (import.meta.url.startsWith("file:///$bunfs/")) return "./io/worker.ts";
  return new URL("./worker.ts", import.meta.url).href;
}

/** One thread and the job it runs. */
interface Thread {
  worker: Worker & { ref?: () => void; unref?: () => void };
  /** Called with each message of its current job; null while idle. */
  onReply: ((reply: WorkerReply) => void) | null;
  onFailure: ((message: string) => void) | null;
}

/** Creates the I/O threads of a process (none start until the first job). */
export function createFileThreads(options: FileThreadsOptions = {}): FileThreads {
  const url = options.workerUrl ?? workerSpecifier();
  const maxHung = options.maxHung ?? DEFAULT_MAX_HUNG;
  const idle: Thread[] = [];
  const busy = new Set<Thread>();
  const hung = new Map<Thread, { label: string; since: number }>();
  let nextId = 1;

  const spawn = (): Thread => {
    // The environment as it is now (the S3 variables may have been set after the process started).
    const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
    const thread: Thread = { worker: new Worker(url, { env }) as Thread["worker"], onReply: null, onFailure: null };
    if (options.nice !== undefined) thread.worker.postMessage({ nice: options.nice });
    thread.worker.onmessage = (event: MessageEvent<WorkerReply>) => thread.onReply?.(event.data);
    thread.worker.onerror = (event) => {
      event.preventDefault?.();
      thread.onFailure?.(event.message ?? "the I/O thread failed");
    };
    thread.worker.addEventListener("close", () => {
      hung.delete(thread);
      busy.delete(thread);
      const at = idle.indexOf(thread);
      if (at >= 0) idle.splice(at, 1);
    });
    return thread;
  };

  const release = (thread: Thread) => {
    thread.onReply = null;
    thread.onFailure = null;
    busy.delete(thread);
    if (idle.length < MAX_IDLE) {
      // An idle thread does not keep the process alive (a CLI command exits when done).
      thread.worker.unref?.();
      idle.push(thread);
    } else thread.worker.terminate();
  };

  const run = <J extends Job>(job: J, { timeoutMs, label }: RunOptions): Promise<JobResult<J>> => {
    if (hung.size >= maxHung) {
      const oldest = [...hung.values()].sort((a, b) => a.since - b.since)[0];
      return Promise.reject(
        new IoError(
          "hung",
          `${label}: not started: ${hung.size} earlier file operations have not returned (the oldest, ${oldest.label}, for ${Math.round((Date.now() - oldest.since) / 1000)} s)`,
        ),
      );
    }
    const thread = idle.pop() ?? spawn();
    thread.worker.ref?.();
    busy.add(thread);
    const id = nextId++;
    return new Promise<JobResult<J>>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const arm = (ms: number) => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          thread.onReply = null;
          thread.onFailure = null;
          busy.delete(thread);
          hung.set(thread, { label, since: Date.now() });
          thread.worker.terminate();
          reject(new IoError("timeout", `${label}: no progress for ${ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`}; the operation is abandoned (timed out)`));
        }, ms);
      };
      arm(timeoutMs);
      thread.onReply = (reply) => {
        if (reply.id !== id) return;
        if ("progress" in reply) {
          arm(timeoutMs + (reply.quietMs ?? 0));
          return;
        }
        clearTimeout(timer);
        release(thread);
        if ("error" in reply) reject(deserializeError(reply.error));
        else resolve(reply.result as JobResult<J>);
      };
      thread.onFailure = (message) => {
        clearTimeout(timer);
        thread.onReply = null;
        thread.onFailure = null;
        busy.delete(thread);
        thread.worker.terminate();
        reject(new IoError("io", `${label}: the I/O thread failed: ${message}`));
      };
      thread.worker.postMessage({ id, job });
    });
  };

  return {
    run,
    hung: () => [...hung.values()].sort((a, b) => a.since - b.since),
    close() {
      for (const thread of [...busy]) thread.onFailure?.("the process is shutting down");
      for (const thread of [...idle, ...hung.keys()]) thread.worker.terminate();
      idle.length = 0;
    },
  };
}
