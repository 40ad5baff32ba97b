/**
 * Test helper: `serve` as a child process (`bun src/cli.ts serve …`) over a small snapshot in a
 * temporary folder, for what needs a process of its own — signals, exit codes, its memory.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import type { UserRecord } from "../../src/generate/record.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { descendantsOf, killAll, whenEnded } from "./processes.ts";
import { buildStoreFromRecords } from "./table-store.ts";

/** The project root (the cli's working directory). */
export const ROOT = resolve(import.meta.dir, "..", "..");

/** A temporary folder with a snapshot of `records` in it. */
export function snapshotDir(records: readonly UserRecord[]): { dir: string; snapshot: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "users-serve-"));
  const snapshot = join(dir, "users.snap");
  writeSnapshot(snapshot, buildStoreFromRecords(records));
  return { dir, snapshot, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A pino line of the child, parsed (non-JSON output as `{level: 0, msg}`). */
export type LogLine = { level: number; msg: string; [key: string]: unknown };

/** A running `serve` child. */
export interface ServeProcess {
  url: string;
  port: number;
  pid: number;
  child: Subprocess<"ignore", "ignore", "pipe">;
  /** The pino lines logged so far, parsed. */
  logs: () => { level: number; msg: string; [key: string]: unknown }[];
  /** Resolves once a line with `msg` is logged; rejects when the log ends first (the process and its workers exited). */
  waitForLog: (msg: string) => Promise<void>;
  /**
   * Resolves with the first line logged, from the `after`-th on (default 0), for which `match`
   * is true; rejects when the log ends first (stderr closed: the process, and the workers that
   * share its stderr, exited). No time bound: a line that never comes is ended by the test's own
   * timeout.
   */
  waitForLine: (match: (line: LogLine) => boolean, options?: { after?: number; what?: string }) => Promise<LogLine>;
  /**
   * Resolves once the process has exited and its stderr is read to the end: every line it
   * logged is then in {@link logs} (an exit can be seen before the pipe's last bytes are read).
   */
  finished: () => Promise<void>;
  /** Resident set size now, in bytes (Linux /proc). */
  rss: () => number;
  /** Kills the process and every process it started (SIGKILL) unless they have exited, and resolves once they all have: for a test's `finally`, so no child outlives it. */
  dispose: () => Promise<void>;
}

/**
 * Spawns `serve --snapshot <snapshot> --port 0 --no-demo <args>` (no `--snapshot` when null: a
 * replica with `--source` in `args`; no `--no-demo` when `args` holds `--demo`, which is not
 * passed on) and waits for "listening".
 * @throws Error with the process's output when it exits first
 */
export async function spawnServe(snapshot: string | null, args: string[] = [], env: Record<string, string> = {}): Promise<ServeProcess> {
  const source = snapshot === null ? [] : ["--snapshot", snapshot];
  const demo = args.includes("--demo") ? [] : ["--no-demo"];
  const child = Bun.spawn([process.execPath, join(ROOT, "src", "cli.ts"), "serve", ...source, "--port", "0", ...demo, ...args.filter((a) => a !== "--demo")], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const lines: LogLine[] = [];
  let text = "";
  const waiters = new Set<() => void>();
  /** True once stderr is read to its end: no line comes any more. */
  let logEnded = false;
  const stderrRead = (async () => {
    const decoder = new TextDecoder();
    const reader = child.stderr.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      let newline = text.indexOf("\n");
      while (newline >= 0) {
        const line = text.slice(0, newline);
        text = text.slice(newline + 1);
        try {
          lines.push(JSON.parse(line));
        } catch {
          lines.push({ level: 0, msg: line });
        }
        newline = text.indexOf("\n");
      }
      for (const w of waiters) w();
    }
    logEnded = true;
    for (const w of waiters) w();
  })();
  const waitForLine = (match: (line: LogLine) => boolean, options: { after?: number; what?: string } = {}) =>
    new Promise<LogLine>((res, rej) => {
      const what = options.what ?? "the line waited for";
      const check = () => {
        const found = lines.slice(options.after ?? 0).find(match);
        if (found !== undefined) {
          waiters.delete(check);
          res(found);
        } else if (logEnded) {
          waiters.delete(check);
          rej(new Error(`serve's log ended (it exited: ${child.exitCode ?? child.signalCode ?? "not yet reaped"}) before ${what} was logged: ${JSON.stringify(lines)}`));
        }
      };
      waiters.add(check);
      check();
    });
  const waitForLog = async (msg: string) => {
    await waitForLine((l) => l.msg === msg, { what: `"${msg}"` });
  };
  // rejects only once the process has exited (its log ended)
  await waitForLog("listening");
  const url = String(lines.find((l) => l.msg === "listening")?.url);
  return {
    url,
    port: Number(new URL(url).port),
    pid: child.pid,
    child,
    logs: () => lines,
    waitForLog,
    waitForLine,
    finished: async () => {
      await child.exited;
      await stderrRead;
    },
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1]) * 1024,
    dispose: async () => {
      // a supervisor's workers too (their own exit on the supervisor's is tested on its own)
      const tree = descendantsOf(child.pid).map((p) => p.pid);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      killAll(tree);
      await child.exited;
      await whenEnded(tree);
    },
  };
}
