/**
 * `serve --workers N`: N server processes on one port (SO_REUSEPORT: the kernel spreads the
 * connections), each mapping its own private copy of one snapshot file. The supervisor runs no
 * server itself: it starts the workers, restarts one that dies (after 1 s, doubling up to 30 s
 * while a worker keeps dying within seconds of its start), passes SIGHUP on (each worker
 * reloads the file, copying and verifying it on an I/O thread while it keeps serving), and on
 * SIGTERM or SIGINT has every worker drain, then exits. With `--source`, the supervisor alone
 * follows the location (downloads each new version into place) and, over an IPC channel,
 * announces each version to the workers — each swaps it in together with the change batches
 * listed after it (publish/follow.ts `followSupervised`) — and sends them the source's status
 * (their /readyz and metrics show it).
 *
 * No worker outlives its supervisor: the supervisor holds the write end of each worker's
 * standard input and never writes to it; when the supervisor exits, however it exits (SIGKILL
 * included), the kernel closes it, the worker reads the end of its input
 * ({@link watchSupervisor}), drains and exits — it never stays bound to the port serving a
 * version nobody follows any more.
 */
import type { Subprocess } from "bun";
import type { Logger } from "pino";

/** First delay before a dead worker is started again, in ms; doubled while it keeps dying young. */
const RESTART_DELAY_MS = 1000;

/** Longest delay before a restart, in ms. */
const MAX_RESTART_DELAY_MS = 30_000;

/** A worker that lived at least this long, in ms, restarts after {@link RESTART_DELAY_MS} again. */
const STABLE_MS = 10_000;

/** One worker: its process, when it started, and its current restart delay. */
interface Worker {
  index: number;
  /** Its standard input is a pipe this process never writes to: its end tells the worker that the supervisor is gone. */
  child: Subprocess<"pipe", "inherit", "inherit">;
  startedAt: number;
  delayMs: number;
}

/** A running supervisor. */
export interface Supervisor {
  /** The workers' process ids, by index. */
  pids: () => number[];
  /** Sends SIGHUP to every worker (each reloads the snapshot file; a replica's workers re-read the access policy only: their versions come from {@link Supervisor.send}). */
  reload: () => void;
  /** Sends every worker a message over its IPC channel (with `ipc`), e.g. the source's status. */
  send: (message: unknown) => void;
  /** SIGTERM to every worker (each drains), then resolves once all have exited. */
  stop: () => Promise<void>;
}

/**
 * A worker's side of {@link superviseWorkers}: calls `onGone` once, when the supervisor is gone —
 * the end of this process's standard input, whose write end only the supervisor holds (the
 * kernel closes it when the supervisor exits, SIGKILL included). Bytes read are dropped (the
 * supervisor sends none).
 */
export function watchSupervisor(onGone: () => void): void {
  let gone = false;
  const once = () => {
    if (gone) return;
    gone = true;
    onGone();
  };
  process.stdin.on("data", () => {});
  process.stdin.on("end", once);
  process.stdin.on("close", once);
  process.stdin.on("error", once);
}

/** A free TCP port on `host`, for workers that must share one (port 0 would give each its own). */
export function freePort(host: string): number {
  const probe = Bun.listen({ hostname: host, port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/**
 * Starts `count` workers, each `command` (a `serve` command line with `--reuse-port` and a
 * fixed port), and keeps them running: a worker that exits while the supervisor is not stopping
 * is started again (logged with its exit code and the delay).
 * @param command the worker's argv (its first element the executable)
 * @param options.ipc open an IPC channel to each worker (see {@link Supervisor.send});
 *   `greeting` is sent to each worker when it starts (the latest status)
 */
export function superviseWorkers(count: number, command: string[], logger: Logger, options: { ipc?: boolean; greeting?: () => unknown } = {}): Supervisor {
  let stopping = false;
  const workers: Worker[] = [];
  const start = (index: number, delayMs: number) => {
    const child = Bun.spawn(command, {
      stdin: "pipe",
      stdout: "inherit",
      stderr: "inherit",
      env: { ...process.env, WORKER_INDEX: String(index) },
      ...(options.ipc ? { ipc() {}, serialization: "json" as const } : {}),
    }) as Subprocess<"pipe", "inherit", "inherit">;
    const worker: Worker = { index, child, startedAt: Date.now(), delayMs };
    workers[index] = worker;
    logger.info({ worker: index, pid: child.pid }, "worker started");
    if (options.ipc && options.greeting !== undefined) {
      try {
        child.send(options.greeting());
      } catch {
        // the worker is gone already: its exit is handled below
      }
    }
    void child.exited.then((code) => {
      if (stopping) return;
      const lived = Date.now() - worker.startedAt;
      const next = lived >= STABLE_MS ? RESTART_DELAY_MS : Math.min(MAX_RESTART_DELAY_MS, worker.delayMs * 2);
      const wait = lived >= STABLE_MS ? RESTART_DELAY_MS : worker.delayMs;
      logger.error({ worker: index, pid: child.pid, code, restartInMs: wait }, "worker exited; starting it again");
      setTimeout(() => {
        if (!stopping) start(index, next);
      }, wait);
    });
  };
  for (let i = 0; i < count; i++) start(i, RESTART_DELAY_MS);
  return {
    pids: () => workers.map((w) => w.child.pid),
    reload: () => {
      for (const w of workers) w.child.kill("SIGHUP");
    },
    send: (message) => {
      for (const w of workers) {
        try {
          if (w.child.exitCode === null) w.child.send(message);
        } catch {
          // a worker between its death and its restart
        }
      }
    },
    stop: async () => {
      stopping = true;
      for (const w of workers) w.child.kill("SIGTERM");
      await Promise.all(workers.map((w) => w.child.exited));
    },
  };
}
