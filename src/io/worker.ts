/**
 * Worker entry of the I/O threads (io/threads.ts): runs one job at a time (io/jobs.ts), posting
 * its progress, then its result or its error. Listed as an entry point of `bun build --compile`.
 */
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { type Job, runJob } from "./jobs.ts";
import { serializeError } from "./threads.ts";

declare const self: Worker;

/**
 * Sets this thread's nice value (threads.ts `FileThreadsOptions.nice`). Linux sets it per
 * thread (this thread's id is the last part of /proc/thread-self); elsewhere, or when not
 * allowed, the thread keeps the process's priority.
 */
function renice(nice: number): void {
  try {
    setPriority(Number(readlinkSync("/proc/thread-self").split("/").pop()), nice);
  } catch {
    // not Linux, or not allowed
  }
}

/** Jobs that map or read a whole snapshot: their mappings are released before the next job. */
const HEAVY = new Set<Job["kind"]>(["fetch", "prepare", "inspect"]);

self.onmessage = async (event: MessageEvent<{ id: number; job: Job } | { nice: number }>) => {
  if ("nice" in event.data) {
    renice(event.data.nice);
    return;
  }
  const { id, job } = event.data;
  let reply: { id: number; result: unknown } | { id: number; error: ReturnType<typeof serializeError> };
  try {
    reply = { id, result: await runJob(job, (progress, quietMs) => self.postMessage({ id, progress, quietMs })) };
  } catch (error) {
    reply = { id, error: serializeError(error) };
  }
  // A verified file stays mapped until its arrays are collected: unmap it now, before the
  // reply. The unmapping holds the process's memory map lock while it tears the mapping down
  // (tens of ms for GBs), and the reply is when the request thread maps the new copy.
  if (HEAVY.has(job.kind)) Bun.gc(true);
  self.postMessage(reply);
};
