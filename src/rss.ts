/** Resident set size of a process, in bytes (Linux /proc/<pid>/status VmRSS), or NaN where there is none. */
import { readFileSync } from "node:fs";

/** The resident set size of process `pid`, in bytes, or NaN (another OS, a gone process). */
export function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m === null ? Number.NaN : Number(m[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}
