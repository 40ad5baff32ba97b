/**
 * Worker entry of the I/O threads (io/threads.ts): runs one job at a time (io/jobs.ts), posting
 * its progress, then its result or its error. Listed as an entry point of `bun build --compile`.
 */
import { type Job, runJob } from "./jobs.ts";
import { serializeError } from "./threads.ts";

declare const self: Worker;

/** Jobs that map or read a whole snapshot: their mappings are released before the next job. */
const HEAVY = new Set<Job["kind"]>(["fetch", "prepare", "inspect"]);

self.onmessage = async (event: MessageEvent<{ id: number; job: Job }>) => {
  const { id, job } = event.data;
  try {
    const result = await runJob(job, (progress, quietMs) => self.postMessage({ id, progress, quietMs }));
    self.postMessage({ id, result });
  } catch (error) {
    self.postMessage({ id, error: serializeError(error) });
  } finally {
    // A verified file stays mapped until its arrays are collected: unmap it now.
    if (HEAVY.has(job.kind)) Bun.gc(true);
  }
};
