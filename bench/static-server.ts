/**
 * The HTTP ceiling: a raw Bun.serve answering every request with one static JSON body of a
 * given size, so wrk measures what the runtime and the load generator alone can do here.
 * Usage: `bun bench/static-server.ts <body bytes>`; prints `{"url": …}` on stdout when listening.
 */
const bytes = Number(process.argv[2] ?? 8192);
// A JSON array padded to exactly `bytes` bytes: ["xxxx…"].
const body = new TextEncoder().encode(`["${"x".repeat(Math.max(0, bytes - 4))}"]`);
const headers = { "content-type": "application/json; charset=utf-8" };
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response(body, { headers }),
});
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.port}`, bytes: body.length })}\n`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
