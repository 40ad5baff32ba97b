/**
 * A diagnostic for the HTTP question: the app's /api/users handlers (src/http/app.ts
 * `dataHandlers`: parse → plan → execute → response body, problem+json on failure) behind a bare
 * Bun.serve, without the route table's router and envelope (no API keys, CORS, metrics, 404/405
 * handling). The gap between this and `serve` is what that layer costs per request.
 * Usage: `bun bench/raw-server.ts <snapshot>`; prints `{"url": …}` on stdout when listening.
 */
import pino from "pino";
import { createEngine } from "../src/engine/execute.ts";
import { DEFAULT_MAX_PAGE_SIZE, dataHandlers } from "../src/http/app.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";

const snapshot = process.argv[2];
if (snapshot === undefined) {
  process.stderr.write("usage: bun bench/raw-server.ts <snapshot>\n");
  process.exit(2);
}
const engine = createEngine(loadSnapshot(snapshot).store);
const users = dataHandlers({ engine: () => engine, maxPageSize: DEFAULT_MAX_PAGE_SIZE, logger: pino(pino.destination(2)) });
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  development: false,
  fetch(request) {
    // Not a product error path: anything but /api/users is a harness problem, and wrk counts it.
    if (request.method === "POST") return users.post(request);
    if (request.method === "GET") return users.get(request);
    return new Response("method not served", { status: 405 });
  },
});
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.port}` })}\n`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
