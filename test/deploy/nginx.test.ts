/**
 * deploy/nginx.conf answers its own errors as problem+json (docs/api.md "Errors"), as the
 * replicas answer theirs: a body over 64 KiB (413), no replica reachable (502). nginx from
 * Debian's package (scripts/install-fleet-tools.sh installs it), on a free loopback port, its
 * upstream two ports nothing listens on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../src/workers.ts";
import { whenEnded } from "../support/processes.ts";

const NGINX = Bun.which("nginx") ?? "/usr/sbin/nginx";
const ROOT = join(import.meta.dir, "..", "..");

let dir: string;
let conf: string;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "nginx-conf-"));
  mkdirSync(join(dir, "logs"));
  const port = freePort("127.0.0.1");
  // two upstream ports nobody listens on: every request to a replica fails to connect
  const text = readFileSync(join(ROOT, "deploy", "nginx.conf"), "utf8")
    .replace("server 127.0.0.1:3001", `server 127.0.0.1:${freePort("127.0.0.1")}`)
    .replace("server 127.0.0.1:3002", `server 127.0.0.1:${freePort("127.0.0.1")}`)
    .replace("listen 8080;", `listen 127.0.0.1:${port};`)
    .replace("worker_processes auto;", "worker_processes 1;");
  conf = join(dir, "nginx.conf");
  writeFileSync(conf, text);
  const started = Bun.spawn([NGINX, "-c", conf, "-p", `${dir}/`], { stderr: "pipe" });
  if ((await started.exited) !== 0) throw new Error(`nginx did not start: ${await new Response(started.stderr).text()}`);
  url = `http://127.0.0.1:${port}`;
}, 30_000);

afterAll(async () => {
  const master = Number(readFileSync(join(dir, "nginx.pid"), "utf8"));
  await Bun.spawn([NGINX, "-s", "stop", "-c", conf, "-p", `${dir}/`]).exited;
  // `nginx -s stop` only signals the master, which exits after its workers: its end is waited for
  await whenEnded([master]);
  rmSync(dir, { recursive: true, force: true });
});

describe("nginx's own errors are problem+json", () => {
  test("no replica reachable: 502 problem+json with Retry-After", async () => {
    const res = await fetch(`${url}/api/users?pageSize=2`);
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toEqual({ type: "/problems/bad-gateway", title: "Bad gateway", status: 502, detail: "no replica answered; try again" });
  });

  test("a body over 64 KiB: 413 problem+json", async () => {
    const res = await fetch(`${url}/api/users`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ x: "a".repeat(70_000) }) });
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toMatchObject({ type: "/problems/payload-too-large", status: 413 });
  });
});
