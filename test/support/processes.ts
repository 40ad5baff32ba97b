/**
 * Test helper: the processes a test run started, found in /proc (Linux), so that none outlives
 * the run. The run makes itself a child subreaper (prctl `PR_SET_CHILD_SUBREAPER`, through
 * bun:ffi): a process orphaned below it — a worker whose supervisor was killed, PostgreSQL's
 * postmaster once pg_ctl has started it and exited, a browser's helper — is handed to the run
 * instead of to PID 1. So every process a test started, and every one those started, is a
 * descendant of the run while it runs: the parent ids in /proc find them all.
 */
import { readFileSync, readdirSync } from "node:fs";
import { FFIType, dlopen } from "bun:ffi";
import { pollUntil } from "./poll.ts";

/** A process seen in /proc: its id, parent's id, state letter (`S`, `R`, `Z`…) and command line. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  state: string;
  command: string;
}

/** prctl(2)'s option number of PR_SET_CHILD_SUBREAPER (linux/prctl.h). */
const PR_SET_CHILD_SUBREAPER = 36;

/**
 * Makes this process the reaper of its orphaned descendants (see the module comment).
 * @returns null when it is, else why not (no glibc or musl to call prctl through): then only the
 *   descendants whose parents are alive are found
 */
export function becomeSubreaper(): string | null {
  for (const library of ["libc.so.6", "libc.so"]) {
    try {
      const libc = dlopen(library, { prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 } });
      const result = libc.symbols.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
      libc.close();
      return result === 0 ? null : `prctl(PR_SET_CHILD_SUBREAPER) returned ${result}`;
    } catch {
      // try the next name
    }
  }
  return "no C library to call prctl through";
}

/** The process `pid` as /proc shows it, or null once it is gone. */
export function processInfo(pid: number): ProcessInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid …": comm may hold spaces and parentheses; the last ")" ends it
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    return { pid, ppid: Number(fields[1]), state: fields[0], command };
  } catch {
    return null;
  }
}

/** True while `pid` runs (a zombie, dead but not reaped, does not: it holds no port, no file, no memory). */
export function isRunning(pid: number): boolean {
  const info = processInfo(pid);
  return info !== null && info.state !== "Z" && info.state !== "X";
}

/** The running descendants of `pid` (children, their children…, zombies aside), by the parent ids /proc shows now. */
export function descendantsOf(pid: number): ProcessInfo[] {
  const infos: ProcessInfo[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const info = processInfo(Number(name));
    if (info !== null) infos.push(info);
  }
  const found: ProcessInfo[] = [];
  const parents = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of infos) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        if (p.state !== "Z" && p.state !== "X") found.push(p);
        grew = true;
      }
    }
  }
  return found;
}

/** Sends SIGKILL to each of `pids` still there (one gone meanwhile is no error). */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // exited meanwhile
    }
  }
}

/**
 * Resolves once none of `pids` runs (gone, or a zombie). A process that is not this one's child
 * tells nothing on its exit, so /proc is checked (support/poll.ts), with no time bound: a caller
 * that has sent SIGKILL can count on it.
 */
export async function whenEnded(pids: readonly number[]): Promise<void> {
  await pollUntil(() => pids.every((pid) => !isRunning(pid)));
}

/** `processes` as lines for an error message: id, parent, command line (cut). */
export function describeProcesses(processes: readonly ProcessInfo[]): string {
  return processes.map((p) => `  ${p.pid} (parent ${p.ppid}): ${p.command.slice(0, 300)}`).join("\n");
}
