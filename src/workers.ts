/**
 * `serve --workers N`: N server processes on one port (SO_REUSEPORT: the kernel spreads the
 * connections), each mapping its own private copy of one snapshot file. The supervisor runs no
 * server itself: it starts the workers, restarts one that dies, passes SIGHUP on (each worker
 * reloads the file), and on SIGTERM or SIGINT has every worker drain, then exits. With
 * `--source`, the supervisor alone follows the location (downloads each new version into place)
 * and signals the workers to reload it.
 */
import type { Subprocess } from "bun";
import type { Logger } from "pino";

/** One worker: its process and when it started. */
interface Worker {
  index: number;
  child: Subprocess<"ignore", "inherit", "inherit">;
}

/** A running supervisor. */
export interface Supervisor {
  /** The workers' process ids, by index. */
  pids: () => number[];
  /** Sends SIGHUP to every worker (each reloads the snapshot file). */
  reload: () => void;
  /** SIGTERM to every worker (each drains), then resolves once all have exited. */
  stop: () => Promise<void>;
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
 * is started again after a second (logged with its exit code).
 * @param command the worker's argv (its first element the executable)
 */
export function superviseWorkers(count: number, command: string[], logger: Logger): Supervisor {
  let stopping = false;
  const workers: Worker[] = [];
  const start = (index: number) => {
    const child = Bun.spawn(command, { stdin: "ignore", stdout: "inherit", stderr: "inherit", env: { ...process.env, WORKER_INDEX: String(index) } });
    const worker: Worker = { index, child };
    workers[index] = worker;
    logger.info({ worker: index, pid: child.pid }, "worker started");
    void child.exited.then((code) => {
      if (stopping) return;
      logger.error({ worker: index, pid: child.pid, code }, "worker exited; starting it again");
      setTimeout(() => {
        if (!stopping) start(index);
      }, 1000);
    });
  };
  for (let i = 0; i < count; i++) start(i);
  return {
    pids: () => workers.map((w) => w.child.pid),
    reload: () => {
      for (const w of workers) w.child.kill("SIGHUP");
    },
    stop: async () => {
      stopping = true;
      for (const w of workers) w.child.kill("SIGTERM");
      await Promise.all(workers.map((w) => w.child.exited));
    },
  };
}
