/**
 * `serve` as a process (docs/api.md "HTTP envelope", Operations and Limits): draining on
 * SIGTERM with keep-alive requests in flight, memory under many large chunked bodies, the
 * configuration errors that stop it at start, and the warning when it listens beyond loopback
 * without API keys.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import type { UserRecord } from "../../src/generate/record.ts";
import { startServer } from "../../src/server.ts";
import { pollUntil } from "../support/poll.ts";
import { LAST_CHUNK, chunk, openRaw, parseAnswer } from "../support/raw-http.ts";
import { ROOT, snapshotDir, spawnServe } from "../support/serve-process.ts";

const RECORDS: UserRecord[] = Array.from({ length: 30 }, (_, i) => ({ id: i + 1, name: `Person ${i + 1}`, email: `p${i + 1}@example.com`, status: "active" }));

let data: ReturnType<typeof snapshotDir>;
beforeAll(() => {
  data = snapshotDir(RECORDS);
});
afterAll(() => data.remove());

describe("SIGTERM drains", () => {
  test("new connections refused, idle ones closed, requests in flight answered with Connection: close, exit 0", async () => {
    const keys = join(data.dir, "keys.txt");
    writeFileSync(keys, "# operators\nsecret-one\n\n  secret-two  \n");
    const serve = await spawnServe(data.snapshot, ["--api-keys-file", keys, "--cors-origin", "https://app.example"]);
    try {
      const auth = "Authorization: Bearer secret-two\r\n";
      // A: a keep-alive connection that answered one request and now idles.
      const idle = await openRaw(serve.port);
      idle.socket.write(`GET /api/users?pageSize=1 HTTP/1.1\r\nHost: x\r\n${auth}Origin: https://app.example\r\n\r\n`);
      const first = parseAnswer(await idle.waitFor((t) => parseAnswer(t) !== undefined)) as NonNullable<ReturnType<typeof parseAnswer>>;
      expect(first.status).toBe(200);
      expect(first.headers["access-control-allow-origin"]).toBe("https://app.example");
      expect(first.headers.connection).toBeUndefined();
      // C: a request whose headers are half sent.
      const partial = await openRaw(serve.port);
      partial.socket.write("GET /readyz HTTP/1.1\r\nHost: x\r\n");
      // B: a POST in flight, its chunked body half sent; connected after C's bytes were written.
      const inFlight = await openRaw(serve.port);
      inFlight.socket.write(`POST /api/users HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
      inFlight.socket.write(chunk('{"startRow": 1,'));
      // Once the server counts B in flight (the scrape is the other one), it has accepted and read
      // C too: connections are accepted in the order they came, and C's bytes were there before
      // B connected, so C's socket was readable no later than B's.
      await pollUntil(async () => {
        const metrics = await (await fetch(`${serve.url}/metrics`, { headers: { authorization: "Bearer secret-two" } })).text();
        return /^users_listing_http_requests_in_flight 2$/m.test(metrics);
      });

      serve.child.kill("SIGTERM");
      await serve.waitForLog("draining: new connections refused, finishing the requests in flight");
      await expect(openRaw(serve.port)).rejects.toThrow("ECONNREFUSED");
      await idle.waitClosed();

      // Requests that reached the server are answered, each with Connection: close; /readyz is 503.
      partial.socket.write("\r\n");
      const ready = parseAnswer(await partial.waitFor((t) => parseAnswer(t) !== undefined)) as NonNullable<ReturnType<typeof parseAnswer>>;
      expect(ready.status).toBe(503);
      expect(ready.headers["content-type"]).toBe("application/problem+json");
      expect(ready.headers.connection).toBe("close");
      expect(JSON.parse(ready.body)).toMatchObject({ type: "/problems/not-ready", status: 503, state: "draining" });
      await partial.waitClosed();

      inFlight.socket.write(chunk('"endRow": 3}'));
      inFlight.socket.write(LAST_CHUNK);
      const answer = parseAnswer(await inFlight.waitFor((t) => parseAnswer(t) !== undefined)) as NonNullable<ReturnType<typeof parseAnswer>>;
      expect(answer.status).toBe(200);
      expect(answer.headers.connection).toBe("close");
      expect(JSON.parse(answer.body).data.map((r: UserRecord) => r.id)).toEqual([2, 3]);
      await inFlight.waitClosed();

      expect(await serve.child.exited).toBe(0);
      await serve.finished();
      const messages = serve.logs().map((l) => l.msg);
      // every request in flight was finished, none cut off at the drain's limit (docs/api.md "Operations")
      expect(serve.logs().find((l) => l.msg === "drained")).toMatchObject({ unfinished: 0 });
      expect(messages.indexOf("drained")).toBeGreaterThan(messages.indexOf("draining: new connections refused, finishing the requests in flight"));
      expect(serve.logs().filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await serve.dispose();
    }
  }, 20_000);

  test("SIGINT drains too", async () => {
    const serve = await spawnServe(data.snapshot);
    try {
      expect((await fetch(`${serve.url}/readyz`)).status).toBe(200);
      serve.child.kill("SIGINT");
      expect(await serve.child.exited).toBe(0);
      await serve.finished();
      expect(serve.logs().map((l) => l.msg)).toContain("drained");
    } finally {
      await serve.dispose();
    }
  }, 20_000);
});

describe("memory under large chunked bodies", () => {
  test("40 parallel 15 MiB chunked POSTs are refused without the server's RSS growing", async () => {
    const serve = await spawnServe(data.snapshot);
    try {
      // Warm up the code paths first, so the figure before is not of a cold process.
      for (let i = 0; i < 3; i++) await fetch(`${serve.url}/api/users`, { method: "POST", body: JSON.stringify({ startRow: 0, endRow: 5 }) });
      const before = serve.rss();
      const piece = chunk(new Uint8Array(64 * 1024).fill(0x20));
      const post = async () => {
        const c = await openRaw(serve.port);
        c.socket.write("POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
        let sent = 0;
        while (sent < 15 * 1024 * 1024 && !c.closed()) {
          sent += 64 * 1024;
          if (!c.socket.write(piece)) {
            await new Promise<void>((resolve) => {
              c.socket.once("drain", resolve);
              c.socket.once("close", resolve);
            });
          }
        }
        await c.waitClosed();
        return { status: parseAnswer(c.received())?.status, sent };
      };
      const results = await Promise.all(Array.from({ length: 40 }, post));
      const after = serve.rss();
      // Each connection is cut off long before its 15 MiB: with a 413, or, when the client was
      // still sending as the server closed (unread bytes make the close a TCP reset, which can
      // discard the answer before the client reads it), with no answer at all.
      const statuses = new Set(results.map((r) => r.status));
      statuses.delete(undefined);
      // which of them got the answer before the reset varies from run to run: none may get another
      for (const status of statuses) expect(status).toBe(413);
      expect(Math.max(...results.map((r) => r.sent))).toBeLessThan(15 * 1024 * 1024);
      expect(after - before).toBeLessThan(64 * 1024 * 1024);
      expect(serve.logs().filter((l) => l.level >= 40)).toEqual([]);
    } finally {
      await serve.dispose();
    }
  }, 30_000);
});

describe("configuration errors stop serve with exit code 1", () => {
  const run = (args: string[], env: Record<string, string> = {}) => {
    const result = Bun.spawnSync([process.execPath, join(ROOT, "src", "cli.ts"), "serve", "--snapshot", data.snapshot, "--no-demo", ...args], {
      cwd: ROOT,
      env: { ...process.env, PORT: "", ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    return { code: result.exitCode, stderr: result.stderr.toString() };
  };

  test("a port that is not an integer from 0 to 65535", () => {
    expect(run([], { PORT: "abc" })).toEqual({ code: 1, stderr: 'error: PORT must be an integer from 0 to 65535 (got "abc")\n' });
    expect(run(["--port", "70000"])).toEqual({ code: 1, stderr: 'error: --port must be an integer from 0 to 65535 (got "70000")\n' });
    expect(run(["--port", "-1"]).code).toBe(1);
  });

  test("an API keys file that is missing or holds no key", () => {
    const missing = run(["--api-keys-file", join(data.dir, "nope.txt")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toStartWith(`error: cannot read the API keys file ${join(data.dir, "nope.txt")}: `);
    const empty = join(data.dir, "empty-keys.txt");
    writeFileSync(empty, "# nothing here\n\n   \n");
    expect(run(["--api-keys-file", empty])).toEqual({
      code: 1,
      stderr: `error: the API keys file ${empty} holds no key (one key a line; blank lines and # comments are ignored)\n`,
    });
    // a FIFO is refused at once (reading it would wait for a writer)
    const fifo = join(data.dir, "keys.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    expect(run(["--api-keys-file", fifo])).toEqual({ code: 1, stderr: `error: cannot read the API keys file ${fifo}: ${fifo} is a FIFO (named pipe), not a regular file\n` });
  });

  test("API_KEYS with commas but no key is refused: keys are never turned off without a word", () => {
    const message = "error: API_KEYS holds no key, only commas and spaces: give a comma list of keys, or leave it empty (or unset) to run without keys\n";
    for (const value of [",", " , ,", ",,,"]) expect({ value, ...run([], { API_KEYS: value }) }).toEqual({ value, code: 1, stderr: message });
  });

  test("a CORS origin that is not one", () => {
    expect(run([], { CORS_ORIGIN: "app.example" })).toEqual({ code: 1, stderr: 'error: CORS origin must be scheme://host[:port] or * (got "app.example")\n' });
  });
});

describe("API_KEYS from the environment", () => {
  test("turns keys on", async () => {
    const serve = await spawnServe(data.snapshot, [], { API_KEYS: "k-one, k-two" });
    try {
      expect((await fetch(`${serve.url}/api/users`)).status).toBe(401);
      expect((await fetch(`${serve.url}/api/users`, { headers: { authorization: "Bearer k-two" } })).status).toBe(200);
      expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
    } finally {
      await serve.dispose();
    }
  }, 20_000);
});

describe("listening beyond loopback without API keys", () => {
  const capture = () => {
    const lines: { level: number; msg: string }[] = [];
    const stream = new Writable({
      write(bytes, _encoding, done) {
        for (const line of String(bytes).split("\n")) if (line !== "") lines.push(JSON.parse(line));
        done();
      },
    });
    return { lines, logger: pino({ level: "info" }, stream) };
  };

  test("logs a warning at start-up; not with keys, not on loopback", async () => {
    for (const [host, apiKeys, warned] of [
      ["0.0.0.0", [], true],
      ["0.0.0.0", ["k"], false],
      ["127.0.0.1", [], false],
      ["localhost", [], false],
    ] as const) {
      const { lines, logger } = capture();
      const server = startServer({ snapshot: data.snapshot, port: 0, host, maxPageSize: 100, logger, apiKeys });
      await server.stop();
      const warnings = lines.filter((l) => l.level === 40).map((l) => l.msg);
      expect(warnings).toEqual(warned ? ["listening beyond loopback without API keys: anyone who reaches this address reads the data (set --api-keys-file or API_KEYS)"] : []);
    }
  });
});
