/**
 * Spawning our server for the start-up and HTTP questions: `bun src/cli.ts serve --snapshot F
 * --port P` as a child process, ready once its pino log line "listening" (JSON on stderr, with
 * "url") appears.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { ROOT } from "./datasets.ts";

/** A running server process. */
export interface ServerProcess {
  url: string;
  port: number;
  pid: number;
  /** From spawn to the "listening" line, in ms. */
  listeningMs: number;
  /** Spawn time (performance.now()). */
  spawnedAt: number;
  stop(): Promise<void>;
}

export { rssOf } from "../src/rss.ts";

/**
 * CPU time a process has used so far (user + system), in ms (Linux /proc/<pid>/stat; clock
 * ticks of 10 ms): the server's own cost of a run, which the load generator sharing the cores
 * moves least.
 * @throws Error when the process is gone
 */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Options of {@link spawnServer}. */
export interface SpawnOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Let several processes listen on the port (SO_REUSEPORT). */
  reusePort?: boolean;
  /** How long to wait for "listening", in ms (default 120 s). */
  timeoutMs?: number;
  /** The source tree whose `src/cli.ts` serves (default: this checkout); another checkout gives a baseline. */
  root?: string;
  /** Extra environment variables (API_KEYS, say). */
  env?: Record<string, string>;
  /** Extra `serve` arguments (`--cache-dir D`, say). */
  args?: string[];
  /** Called with every log line the server writes after "listening" (parsed JSON, or null for other output), and when it arrives (performance.now()). */
  onLine?: (line: Record<string, unknown> | null, at: number) => void;
}

/**
 * Starts `serve` over `snapshot` on 127.0.0.1 (`port` 0 picks one) and waits for "listening".
 * @throws when the process exits first or `timeoutMs` passes.
 */
export async function spawnServer(snapshot: string, options: SpawnOptions = {}): Promise<ServerProcess> {
  const root = options.root ?? ROOT;
  const args = [process.execPath, join(root, "src", "cli.ts"), "serve", "--snapshot", snapshot, "--host", "127.0.0.1", "--port", String(options.port ?? 0)];
  if (options.reusePort) args.push("--reuse-port");
  args.push(...(options.args ?? []));
  const spawnedAt = performance.now();
  const child: Subprocess<"ignore", "ignore", "pipe"> = Bun.spawn(args, {
    cwd: root,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, LOG_LEVEL: "info", ...options.env },
  });
  const reader = child.stderr.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let log = "";
  const deadline = spawnedAt + (options.timeoutMs ?? 120_000);
  let url: string | null = null;
  while (url === null) {
    const remaining = deadline - performance.now();
    if (remaining <= 0) break;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), remaining);
    });
    const chunk = await Promise.race([reader.read(), timeout]);
    clearTimeout(timer);
    if (chunk === null || chunk.done) break;
    const text = decoder.decode(chunk.value, { stream: true });
    buffered += text;
    log += text;
    let newline = buffered.indexOf("\n");
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === "listening" && typeof entry.url === "string") url = entry.url;
      } catch {
        // not a log line
      }
      newline = buffered.indexOf("\n");
    }
  }
  const listeningMs = performance.now() - spawnedAt;
  if (url === null) {
    child.kill();
    throw new Error(`the server did not start: ${log.trim().slice(-500)}`);
  }
  // Keep draining stderr so the child never blocks on a full pipe (each line to `onLine`).
  (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        if (options.onLine === undefined) continue;
        const at = performance.now();
        buffered += decoder.decode(chunk.value, { stream: true });
        let newline = buffered.indexOf("\n");
        while (newline >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          let parsed: Record<string, unknown> | null = null;
          try {
            parsed = JSON.parse(line) as Record<string, unknown>;
          } catch {
            // not a log line
          }
          options.onLine(parsed, at);
          newline = buffered.indexOf("\n");
        }
      }
    } catch {
      // closed
    }
  })();
  const port = Number(new URL(url).port);
  return {
    url,
    port,
    pid: child.pid,
    listeningMs,
    spawnedAt,
    async stop() {
      child.kill("SIGTERM");
      // SIGKILL when it has not exited within 5 s.
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await child.exited;
      clearTimeout(timer);
    },
  };
}
