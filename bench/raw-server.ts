/**
 * A diagnostic for the HTTP question: the app's parse → executeQuery → response body path
 * (src/http/app.ts) behind a bare Bun.serve, without the Elysia app (no OpenAPI, no problem+json). The gap
 * between this and `serve` is what the framework layer costs per request.
 * Usage: `bun bench/raw-server.ts <snapshot>`; prints `{"url": …}` on stdout when listening.
 */
import { createEngine, executeQuery } from "../src/engine/execute.ts";
import { DEFAULT_MAX_PAGE_SIZE } from "../src/http/app.ts";
import { JSON_HEADERS, getBody, postBody } from "../src/http/responses.ts";
import { parseGetQuery } from "../src/query/get.ts";
import { parsePostBody } from "../src/query/post.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";

const snapshot = process.argv[2];
if (snapshot === undefined) {
  process.stderr.write("usage: bun bench/raw-server.ts <snapshot>\n");
  process.exit(2);
}
const engine = createEngine(loadSnapshot(snapshot).store);
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    try {
      if (request.method === "POST") {
        const parsed = parsePostBody(await request.json(), DEFAULT_MAX_PAGE_SIZE);
        const page = executeQuery(engine, parsed.query);
        return new Response(postBody(engine.store, page.rows, page.total), { headers: JSON_HEADERS });
      }
      const url = request.url;
      const q = url.indexOf("?");
      const parsed = parseGetQuery(q < 0 ? "" : url.slice(q + 1), DEFAULT_MAX_PAGE_SIZE);
      const page = executeQuery(engine, parsed.query);
      return new Response(getBody(engine.store, page.rows, page.total, parsed), { headers: JSON_HEADERS });
    } catch (error) {
      // Not a product error path: any failure here is a harness problem, and wrk counts it.
      return new Response(String(error), { status: 500 });
    }
  },
});
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.port}` })}\n`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
