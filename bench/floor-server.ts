/**
 * The floor of the cheap mix over HTTP: a raw Bun.serve doing only what any server answering
 * the mix's requests must do — read each request (a GET's URL and query string; a POST's body,
 * decoded and parsed as JSON) — and answering a static JSON body of the mix's typical size, with
 * no query engine. The static ceiling reads nothing of the request; the gap between the two is
 * the runtime's cost of reading requests, and the gap between this and our server is the cost
 * of answering them.
 * Usage: `bun bench/floor-server.ts <body bytes>`; prints `{"url": …}` on stdout when listening.
 */
export {};

const bytes = Number(process.argv[2] ?? 8192);
// A JSON array padded to exactly `bytes` bytes: ["xxxx…"].
const body = new TextEncoder().encode(`["${"x".repeat(Math.max(0, bytes - 4))}"]`);
const headers = { "content-type": "application/json; charset=utf-8" };
const decoder = new TextDecoder();
/** Request input seen (query string bytes, parsed bodies), so that what is read is used. */
let seen = 0;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  development: false,
  fetch(request) {
    if (request.method === "POST") {
      return request.arrayBuffer().then((buffer) => {
        const parsed = JSON.parse(decoder.decode(buffer)) as { startRow?: number };
        seen += parsed.startRow === undefined ? 0 : 1;
        return new Response(body, { headers });
      });
    }
    const url = request.url;
    seen += url.length - url.indexOf("?");
    return new Response(body, { headers });
  },
});
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.port}`, bytes: body.length })}\n`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
