/**
 * The change feed in one process (events/change-feed.ts), where a stream's reader is under the
 * test's control: a reader that reads nothing is dropped once its queue is full (never
 * buffered without bound), and a batch of more than 1,000 keys is one `"keys": null` change.
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import { Registry } from "prom-client";
import { applyChanges, createEngine } from "../../src/engine/execute.ts";
import { createChangeFeed } from "../../src/events/change-feed.ts";
import { MAX_EVENT_KEYS } from "../../src/events/visible-changes.ts";
import type { Change } from "../../src/live/changes.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";

const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i + 1, name: `n${i + 1}`, email: `e${i + 1}@x`, status: "active" }));
const logger = pino({ level: "silent" });

/** Reads a stream's text until it holds `count` events (blank-line ends), or until it ends. */
async function readEvents(body: ReadableStream<Uint8Array>, count: number): Promise<string[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const events = text.split("\n\n").filter((e) => e.startsWith("id:"));
    if (events.length >= count) {
      reader.releaseLock();
      return events;
    }
    const { done, value } = await reader.read();
    if (done) return events;
    text += decoder.decode(value, { stream: true });
  }
}

describe("the change feed", () => {
  test("a reader that reads nothing is dropped once its queue holds the bound; one that reads is not", async () => {
    const registry = new Registry();
    const feed = createChangeFeed({ logger, maxQueuedBytes: 4096, registry, metricPrefix: "t_" });
    let engine = createEngine(buildStoreFromRecords(rows));
    const idle = feed.open(engine, null, null, new AbortController().signal);
    const reading = feed.open(engine, null, null, new AbortController().signal);
    const read = readEvents(reading.body as ReadableStream<Uint8Array>, 1 + 40);
    expect(feed.streams()).toBe(2);
    for (let i = 0; i < 40; i++) {
      const changes: Change[] = Array.from({ length: 20 }, (_, k) => ({ op: "upsert", record: { ...rows[i * 20 + k], name: `b${i}` } }));
      const batch = { lsn: `0/${(i + 1) * 16}`, commitTime: Date.now(), changes };
      const prepared = feed.prepare(engine, batch);
      engine = applyChanges(engine, batch);
      feed.applied(prepared, engine);
      // the reading stream's reader runs between batches, as a socket's writes do
      await Promise.resolve();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const events = await read;
    expect(events.length).toBe(41);
    expect(feed.streams()).toBe(1);
    const text = await registry.metrics();
    expect(text).toMatch(/t_event_streams_dropped_total 1/);
    expect(text).toMatch(/t_event_streams_open 1/);
    // the idle one errored: what it queued is gone, and its reader learns it was cut
    await expect((idle.body as ReadableStream<Uint8Array>).getReader().read()).rejects.toThrow("fell too far behind");
    feed.close();
    expect(feed.streams()).toBe(0);
  });

  test(`a batch of more than ${MAX_EVENT_KEYS} keys is one change with keys null and more true; of exactly ${MAX_EVENT_KEYS}, every key`, async () => {
    const feed = createChangeFeed({ logger });
    let engine = createEngine(buildStoreFromRecords(rows));
    const response = feed.open(engine, null, null, new AbortController().signal);
    const read = readEvents(response.body as ReadableStream<Uint8Array>, 3);
    for (const n of [MAX_EVENT_KEYS + 1, MAX_EVENT_KEYS]) {
      const changes: Change[] = rows.slice(0, n).map((r) => ({ op: "upsert", record: { ...r, name: `m${n}` } }));
      const batch = { lsn: `0/${n === MAX_EVENT_KEYS ? 2000 : 1000}`, commitTime: Date.now(), changes };
      const prepared = feed.prepare(engine, batch);
      engine = applyChanges(engine, batch);
      feed.applied(prepared, engine);
    }
    const events = await read;
    const data = events.map((e) => JSON.parse(e.split("\ndata: ")[1]));
    expect(data[1]).toEqual({ version: data[1].version, keys: null, more: true });
    expect(data[2].keys).toEqual(rows.slice(0, MAX_EVENT_KEYS).map((r) => r.id));
    feed.close();
  });
});
