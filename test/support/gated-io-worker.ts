/**
 * Test helper: an I/O thread (the protocol of src/io/worker.ts) with a gate. Before a job of the
 * kind named by `IO_GATE_KIND`, it opens the FIFO `IO_GATE_FIFO` for reading, which blocks in
 * the kernel until the test opens it for writing; a job of kind `block` opens its `path` and
 * never goes on (a read hung in the kernel). Every other job runs as in production.
 */
import { closeSync, openSync } from "node:fs";
import { type Job, runJob } from "../../src/io/jobs.ts";
import { serializeError } from "../../src/io/threads.ts";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<{ id: number; job: Job | { kind: "block"; path: string } }>) => {
  const { id, job } = event.data;
  try {
    if (job.kind === "block") {
      closeSync(openSync(job.path, "r"));
      self.postMessage({ id, result: "unblocked" });
      return;
    }
    if (job.kind === process.env.IO_GATE_KIND && process.env.IO_GATE_FIFO !== undefined) closeSync(openSync(process.env.IO_GATE_FIFO, "r"));
    const result = await runJob(job, (progress, quietMs) => self.postMessage({ id, progress, quietMs }));
    self.postMessage({ id, result });
  } catch (error) {
    self.postMessage({ id, error: serializeError(error) });
  }
};
