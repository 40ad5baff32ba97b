/**
 * Question: where do a cheap request's microseconds go inside the process? The cheap mix of
 * bench/http.ts (Q1, Q2, Q4, Q6, Q8; GET and POST) replayed in-process over the served snapshot,
 * each phase timed on its own over warm caches:
 *
 * - parse: the query string or JSON body to the normalized query (src/query);
 * - engine: plan and run (engine/execute.ts `planOf`, `execute`): the page's row numbers;
 * - serialise: the page written as the JSON body and its Response (service/responses.ts);
 * - service: the whole query service (service/pipeline.ts `handle`): the above, the entity tag
 *   and the request's headers read;
 * - framework: the Elysia app answering the Request (its router and the envelope: metrics
 *   off, CORS and keys off) beyond the service; in-process through `app.handle`, so Elysia's
 *   own router rather than Bun's native one that `listen` uses.
 *
 * No socket: what HTTP parsing and the kernel cost is the gap to bench/http.ts's static ceiling.
 * Usage: `bun bench/http-breakdown.ts 1m [--rounds 5]`.
 */
import { parseArgs } from "node:util";
import pino from "pino";
import { type Page, createEngine, execute, planOf } from "../src/engine/execute.ts";
import { createApp } from "../src/http/app.ts";
import { parseGetQuery } from "../src/query/get.ts";
import { parsePostBody } from "../src/query/post.ts";
import type { Query } from "../src/query/types.ts";
import { createQueryService } from "../src/service/pipeline.ts";
import { getResponse, postResponse } from "../src/service/responses.ts";
import { rowsGet, rowsPost } from "../src/service/routes.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { datasetPaths, parseSize } from "./datasets.ts";
import { type MixRequest, cheapMix } from "./http.ts";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: "string", default: "5" } } });
const rows = parseSize(positionals[0] ?? "1m");
const rounds = Number(values.rounds);
const dataset = datasetPaths(rows);
const engine = createEngine(loadSnapshot(dataset.snapshot).store);
const store = engine.store;
const logger = pino({ level: "silent" });
const service = createQueryService({ engine: () => engine, maxPageSize: 1000, logger });
const app = createApp({ engine: () => engine, maxPageSize: 1000, logger });
const mix: MixRequest[] = cheapMix(dataset);
const BASE = "http://127.0.0.1";

/** A fresh Request of a mix entry. */
const requestOf = (r: MixRequest): Request =>
  r.method === "GET" ? new Request(BASE + r.target) : new Request(BASE + r.target, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(r.body) });

/** Mean µs per request of `f` over the mix, `rounds` times after one warm-up round. */
async function timed(label: string, f: (r: MixRequest, i: number) => unknown): Promise<number> {
  for (let i = 0; i < mix.length; i++) await f(mix[i], i);
  let total = 0;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    for (let i = 0; i < mix.length; i++) {
      const out = f(mix[i], i);
      if (out instanceof Promise) await out;
    }
    total += performance.now() - started;
  }
  const us = (total * 1000) / (rounds * mix.length);
  process.stdout.write(`${label.padEnd(44)} ${us.toFixed(1).padStart(8)} µs/request\n`);
  return us;
}

const parsedGet = mix.map((r) => (r.method === "GET" ? parseGetQuery(r.target.slice(r.target.indexOf("?") + 1), 1000, store.schema) : null));
const bodies = mix.map((r) => (r.method === "POST" ? JSON.stringify(r.body) : ""));
const queries: Query[] = mix.map((r, i) => (r.method === "GET" ? (parsedGet[i] as NonNullable<(typeof parsedGet)[number]>).query : parsePostBody(r.body, 1000, store.schema).query));
const pages: Page[] = queries.map((q) => execute(engine, planOf(engine, q), false));

process.stdout.write(`cheap mix, ${mix.length} requests (${mix.filter((r) => r.method === "GET").length} GET), ${rows} rows, ${rounds} rounds, warm caches\n`);
const requestUs = await timed("Request objects made (subtracted below)", (r) => requestOf(r));
const parse = await timed("parse (query string / JSON body)", (r, i) =>
  r.method === "GET" ? parseGetQuery(r.target.slice(r.target.indexOf("?") + 1), 1000, store.schema) : parsePostBody(JSON.parse(bodies[i]), 1000, store.schema),
);
const run = await timed("engine (plan + run)", (_r, i) => execute(engine, planOf(engine, queries[i]), false));
const serialise = await timed("serialise (JSON body + Response)", (r, i) => {
  const page = pages[i];
  const p = parsedGet[i];
  const context = { store, etag: '"t"', coding: null, version: store.snapshotId, extra: null, projection: null };
  return r.method === "GET" && p !== null ? getResponse(context, page.rows, page.total, p, JSON.stringify(p.meta)) : postResponse(context, page.rows, page.total);
});
const whole = await timed("service (handle: all of the above, ETag)", (r) => service.handle(r.method === "GET" ? rowsGet : (rowsPost as never), requestOf(r)));
const framed = await timed("Elysia app (app.handle: router + envelope)", (r) => app.handle(requestOf(r)));
process.stdout.write(
  `\nbreakdown, µs per request: parse ${parse.toFixed(1)}, view 0 (no access control), engine ${run.toFixed(1)}, serialise ${serialise.toFixed(1)}, ` +
    `service's own (tag, headers, body read) ${(whole - requestUs - parse - run - serialise).toFixed(1)}, framework ${(framed - whole).toFixed(1)}\n`,
);
