/**
 * Question: what does access control (docs/api.md "Access control") cost?
 *
 * - HTTP, in one run: the cheap mix (bench/http.ts's Q1, Q2, Q4, Q6, Q8, GET and POST) with
 *   offsets within one organisation's rows, against a server without access control, then the
 *   same list against servers with `--access`, each request carrying a tenant's JWT (20
 *   organisations round-robin: a role with a filter on the 20-value `org_id` column and a column
 *   list without `email`); to tell the costs apart, JWTs of a role seeing everything (the
 *   credential alone), of a role without `email` (the projection alone), of an organisation's
 *   rows with every column (the filter alone), and the admin key. Every server runs at once,
 *   warmed, and the rounds interleave them; each scenario's median round is given, with the
 *   server's CPU time per request (from /proc), the figure least moved by the machine's other load.
 * - JWT verification, in process: jose's `jwtVerify` of an HS256 token (the cost of every
 *   request without the verified-token cache), and the access control's authorize of the same
 *   token once kept, of a key, and of a new token (verification and the view looked up): p50,
 *   p99, in µs, each call timed on its own.
 * - Memory: 10,000 distinct tenants' first requests (a sorted first page, each tenant a claim
 *   of the 10,000-value `tenant` column: a filter result and an ordered list each), then 10,000
 *   more (tenants without rows): the server's RSS before and after each round, split into its
 *   anonymous part (heap and buffers: what the caches and the requests' garbage hold) and its
 *   file-backed part (pages of the mapped snapshot the requests touched: the OS's reclaimable
 *   page cache), and the caches' bytes from /metrics, against their budgets (engine filters and
 *   orders, access views and tokens): the anonymous growth is what the budgets bound.
 *
 * Timing runs share the machine: run under `flock /tmp/bench.lock` so no two benchmarks overlap.
 * With `--baseline DIR`, the HTTP rounds also run the mix without access control and the tenant
 * mix on the server of another checkout (its own build of the same records), and print ours ÷
 * the baseline's.
 * Usage: `flock /tmp/bench.lock bun bench/access.ts [--rows 1m] [--duration 10] [--tenants 10000] [--only http|verify|memory] [--baseline DIR] [--out FILE]`
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SignJWT, jwtVerify } from "jose";
import pino from "pino";
import { createAccessControl } from "../src/access/control.ts";
import { generateUsers } from "../src/generate/users.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { tableOfObjects } from "../src/snapshot/objects.ts";
import { writeSnapshot } from "../src/snapshot/write.ts";
import { buildStore } from "../src/store/build.ts";
import { CACHE_ROOT, parseSize, prng, sizeLabel } from "./datasets.ts";
import { CONNECTIONS, type MixRequest, WRK_HINT, haveWrk, probe, runWrk, writeList } from "./http.ts";
import { formatMs } from "./measure.ts";
import { cpuMsOf, spawnServer } from "./server.ts";

const { values: args } = parseArgs({
  options: {
    rows: { type: "string", default: "1m" },
    duration: { type: "string", default: "10" },
    tenants: { type: "string", default: "10000" },
    only: { type: "string" },
    out: { type: "string" },
    baseline: { type: "string" },
  },
});
const ROWS = parseSize(args.rows as string);
const DURATION_S = Number(args.duration);
const TENANTS = Number(args.tenants);
const ORGS = 20;
const SECRET = "bench-secret-that-is-long-enough-for-hs256-0001";
const ADMIN_KEY = "bench-admin-key";
const dir = join(CACHE_ROOT, "access");
mkdirSync(dir, { recursive: true });
const lines: string[] = [];
const log = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};

/** The dataset's records: generated users (seed 1) with `org_id` (20 values) and `tenant` (10,000 values). */
function* datasetRecords(): Generator<Record<string, unknown>> {
  let i = 0;
  for (const user of generateUsers({ count: ROWS, seed: 1 })) {
    i++;
    yield { ...user, org_id: ((i * 7919) % ORGS) + 1, tenant: ((i * 104_729) % 10_000) + 1 };
  }
}

/** The dataset ({@link datasetRecords}) as a snapshot, cached by row count. */
function dataset(): string {
  const path = join(dir, `users-orgs-${sizeLabel(ROWS)}.snap`);
  if (existsSync(path)) return path;
  log(`building ${path}`);
  writeSnapshot(path, buildStore(tableOfObjects(datasetRecords(), { key: "id", columns: [{ id: "org_id", kind: "number" }, { id: "tenant", kind: "number" }] })));
  return path;
}

/**
 * The dataset as a snapshot of the checkout `root` (`--baseline`), built by its own
 * `snapshot build` from the records as NDJSON (its format may be older than ours), cached by
 * row count and the checkout's commit.
 * @throws Error when the build fails
 */
async function baselineDataset(root: string): Promise<string> {
  const commit = Bun.spawnSync(["git", "-C", root, "rev-parse", "--short=12", "HEAD"]).stdout.toString().trim();
  const path = join(dir, `users-orgs-${sizeLabel(ROWS)}-${commit}.snap`);
  if (existsSync(path)) return path;
  const input = join(dir, `users-orgs-${sizeLabel(ROWS)}.ndjson`);
  const lines: string[] = [];
  for (const record of datasetRecords()) lines.push(JSON.stringify(record));
  writeFileSync(input, `${lines.join("\n")}\n`);
  log(`building ${path} with ${root}'s snapshot build`);
  const build = Bun.spawnSync([process.execPath, join(root, "src", "cli.ts"), "snapshot", "build", input, "-o", path], { cwd: root, stderr: "pipe" });
  rmSync(input, { force: true });
  if (build.exitCode !== 0) throw new Error(`the baseline's snapshot build failed: ${build.stderr.toString().slice(-500)}`);
  return path;
}

/** The columns the limited roles see: every one but `email`. */
const ROLE_COLUMNS = ["id", "name", "status", "org_id", "tenant"];

/**
 * The policy: an admin key; `org` (a tenant per organisation: a filter on `org_id`, no e-mail);
 * `tenant` (a tenant per `tenant` value, no e-mail); and, to tell the costs apart, `all` (every
 * row and column, by JWT), `columns` (no e-mail, every row), `rows` (an organisation's rows, every column).
 */
function policy(): string {
  const path = join(dir, "policy.json");
  const sha = new Bun.CryptoHasher("sha256").update(ADMIN_KEY).digest("hex");
  const byOrg = { org_id: { filterType: "number", type: "equals", filter: { claim: "org_id" } } };
  writeFileSync(
    path,
    JSON.stringify({
      jwt: { secret: SECRET, algorithms: ["HS256"] },
      keys: [{ sha256: sha, role: "admin" }],
      roles: {
        admin: { columns: "*" },
        org: { columns: ROLE_COLUMNS, filterModel: byOrg },
        tenant: { columns: ROLE_COLUMNS, filterModel: { tenant: { filterType: "number", type: "equals", filter: { claim: "tenant" } } } },
        all: { columns: "*" },
        columns: { columns: ROLE_COLUMNS },
        rows: { columns: "*", filterModel: byOrg },
      },
    }),
  );
  return path;
}

const secretKey = new TextEncoder().encode(SECRET);
const mint = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt().setExpirationTime("2h").sign(secretKey);

/** GET or POST for a window at `offset` of `limit` rows (as bench/http.ts writes them). */
function windowRequest(get: boolean, offset: number, limit: number, params: Record<string, string>, sortModel: object[], filterModel: object): MixRequest {
  if (get) {
    const query = new URLSearchParams({ page: String(Math.floor(offset / limit) + 1), pageSize: String(limit), ...params });
    return { method: "GET", target: `/api/users?${query}` };
  }
  return { method: "POST", target: "/api/users", body: { startRow: offset, endRow: offset + limit, sortModel, filterModel } };
}

/** The cheap mix (bench/http.ts: Q1, Q2, Q4, Q6, Q8) with offsets within one organisation's rows (about a 20th), so that a tenant's pages are as full as anyone's. */
function cheapMix(rows: number): MixRequest[] {
  const next = prng(0xc4ea9);
  const below = (limit: number) => next() % Math.max(1, limit);
  const orgRows = Math.floor(rows / ORGS);
  const out: MixRequest[] = [];
  for (let i = 0; i < 4000; i++) {
    const get = Math.floor(i / 5) % 2 === 0;
    switch (i % 5) {
      case 0:
        out.push(windowRequest(get, 0, 10, { sortBy: "name", sortOrder: "asc" }, [{ colId: "name", sort: "asc" }], {}));
        break;
      case 1:
        out.push(windowRequest(get, below(orgRows - 100), 100, { sortBy: "name", sortOrder: "desc" }, [{ colId: "name", sort: "desc" }], {}));
        break;
      case 2:
        out.push(windowRequest(get, below(Math.floor(orgRows * 0.25)), 100, { sortBy: "name", sortOrder: "desc", "filter[status]": "inactive" }, [{ colId: "name", sort: "desc" }], { status: { filterType: "set", values: ["inactive"] } }));
        break;
      case 3:
        out.push(windowRequest(get, below(orgRows - 100), 100, {}, [], {}));
        break;
      default:
        out.push(windowRequest(false, below(orgRows - 100), 100, {}, [{ colId: "status", sort: "asc" }, { colId: "name", sort: "desc" }], {}));
    }
  }
  return out;
}

/** Quantiles of microsecond samples. */
function quantiles(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length * 0.5)], p99: sorted[Math.floor(sorted.length * 0.99)] };
}

/** Times `run` `n` times, each call on its own, after `n / 4` warm-up calls; µs. */
async function timeEach(n: number, run: () => unknown): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < n / 4; i++) await run();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = run();
    if (r instanceof Promise) await r;
    samples.push((performance.now() - t) * 1000);
  }
  return quantiles(samples);
}

/** Rounds of the HTTP scenarios: each round runs every scenario once, in turn; the figures are each scenario's median round. */
const ROUNDS = 3;

/** One HTTP scenario's figures: its median round's requests per second and latency, and the server's CPU per request. */
interface HttpFigure {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU time per request, µs (median round). */
  cpuUs: number;
  rounds: number[];
}

async function httpScenarios(snapshot: string, policyFile: string, baseline: { root: string; snapshot: string } | null): Promise<HttpFigure[]> {
  const base = cheapMix(ROWS);
  const tokensOf = (role: string) => Promise.all(Array.from({ length: ORGS }, (_, i) => mint({ role, org_id: i + 1 })));
  const withTokens = (tokens: string[]) => base.map((r, i) => ({ ...r, headers: { Authorization: `Bearer ${tokens[i % ORGS]}` } }));
  const scenarios: { name: string; access: boolean; requests: MixRequest[]; root?: string; snapshot?: string }[] = [
    { name: "no access control", access: false, requests: base },
    { name: "tenant: a JWT per organisation (20, round-robin), org filter + columns without email", access: true, requests: withTokens(await tokensOf("org")) },
    { name: "  of which the credential: a JWT of a role seeing every row and column", access: true, requests: withTokens(await tokensOf("all")) },
    { name: "  of which the columns: a JWT of a role without email, every row", access: true, requests: withTokens(await tokensOf("columns")) },
    { name: "  of which the rows: a JWT of an organisation's rows, every column", access: true, requests: withTokens(await tokensOf("rows")) },
    { name: "the admin key (SHA-256 and compare per request; every row and column)", access: true, requests: base.map((r) => ({ ...r, headers: { Authorization: `Bearer ${ADMIN_KEY}` } })) },
  ];
  if (baseline !== null) {
    // the same two mixes on the baseline's server, in the same rounds
    scenarios.push(
      { ...scenarios[0], name: `baseline (${baseline.root}): no access control`, ...baseline },
      { ...scenarios[1], name: `baseline (${baseline.root}): tenant`, ...baseline },
    );
  }
  // every server started (cold) and warmed, then the rounds interleave them, so that the
  // machine's other load falls on each alike
  const servers: Awaited<ReturnType<typeof spawnServer>>[] = [];
  const lists = scenarios.map((s, i) => writeList(`access-${sizeLabel(ROWS)}-${i}`, s.requests));
  try {
    for (const [i, s] of scenarios.entries()) {
      const server = await spawnServer(s.snapshot ?? snapshot, { root: s.root, env: s.access ? { ACCESS_FILE: policyFile } : {} });
      servers.push(server);
      await probe(server.url, s.requests.slice(0, 100));
      await runWrk(server.url, lists[i], CONNECTIONS, 2);
    }
    const runs = scenarios.map(() => [] as { rps: number; p50: number; p99: number; cpuUs: number }[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, s] of scenarios.entries()) {
        const before = cpuMsOf(servers[i].pid);
        const r = await runWrk(servers[i].url, lists[i], CONNECTIONS, DURATION_S);
        const cpu = cpuMsOf(servers[i].pid) - before;
        const errors = r.errors_connect + r.errors_read + r.errors_write + r.errors_timeout + r.errors_status;
        if (errors > 0) throw new Error(`${s.name}: ${errors} errors`);
        runs[i].push({ rps: r.requests / (r.duration_us / 1e6), p50: r.p50_us / 1000, p99: r.p99_us / 1000, cpuUs: (cpu * 1000) / r.requests });
      }
    }
    return scenarios.map((s, i) => {
      const median = [...runs[i]].sort((a, b) => a.rps - b.rps)[Math.floor(runs[i].length / 2)];
      const cpu = [...runs[i]].map((r) => r.cpuUs).sort((a, b) => a - b)[Math.floor(runs[i].length / 2)];
      log(`  ${s.name}: ${Math.round(median.rps).toLocaleString("en")} req/s (rounds ${runs[i].map((r) => Math.round(r.rps).toLocaleString("en")).join(", ")}), p50 ${formatMs(median.p50)}, p99 ${formatMs(median.p99)}; server CPU ${cpu.toFixed(1)} µs/request`);
      return { name: s.name, ...median, cpuUs: cpu, rounds: runs[i].map((r) => r.rps) };
    });
  } finally {
    for (const server of servers) await server.stop();
  }
}

async function verifyCosts(snapshot: string, policyFile: string) {
  const schema = loadSnapshot(snapshot, { verify: false }).store.schema;
  const access = createAccessControl({ file: policyFile, schema: () => schema, logger: pino({ level: "silent" }), registry: null });
  const token = await mint({ role: "org", org_id: 7 });
  const request = (credential: string) => new Request("http://127.0.0.1/api/users", { headers: { authorization: `Bearer ${credential}` } });
  const kept = request(token);
  const key = request(ADMIN_KEY);
  let fresh = 0;
  const freshTokens = await Promise.all(Array.from({ length: 6000 }, () => mint({ role: "org", org_id: (fresh++ % ORGS) + 1, jti: crypto.randomUUID() })));
  let f = 0;
  return {
    jose: await timeEach(20_000, () => jwtVerify(token, secretKey, { algorithms: ["HS256"] })),
    kept: await timeEach(20_000, () => access.authorize(kept, schema)),
    key: await timeEach(20_000, () => access.authorize(key, schema)),
    fresh: await timeEach(4_000, () => access.authorize(request(freshTokens[f++]), schema)),
  };
}

/** Resident set of a process, in bytes: all of it, its anonymous part and its file-backed part (/proc/<pid>/status). */
interface Rss {
  rss: number;
  anon: number;
  file: number;
}

function rssParts(pid: number): Rss {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") };
}

/** A /metrics gauge's value by its labels' text. */
function gauge(text: string, name: string, labels: string): number {
  const m = new RegExp(`^${name}\\{${labels}\\} ([0-9.e+]+)$`, "m").exec(text);
  return m === null ? Number.NaN : Number(m[1]);
}

async function memory(snapshot: string, policyFile: string) {
  const server = await spawnServer(snapshot, { env: { ACCESS_FILE: policyFile } });
  try {
    const url = server.url;
    const metrics = async () => (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text();
    // one request first: the code paths warm, the baseline taken after
    await fetch(`${url}/api/users?pageSize=10&sortBy=name`, { headers: { authorization: `Bearer ${await mint({ role: "tenant", tenant: 0 })}` } });
    const before = rssParts(server.pid);
    const rounds: { tenants: string; rss: Rss; caches: Record<string, number> }[] = [];
    for (const [from, label] of [
      [1, `1…${TENANTS} (each ~${Math.round(ROWS / 10_000)} rows)`],
      [TENANTS + 1, `${TENANTS + 1}…${2 * TENANTS} (no rows)`],
    ] as const) {
      const tokens = await Promise.all(Array.from({ length: TENANTS }, (_, i) => mint({ role: "tenant", tenant: from + i })));
      let next = 0;
      const worker = async () => {
        while (next < tokens.length) {
          const t = tokens[next++];
          const r = await fetch(`${url}/api/users?pageSize=10&sortBy=name`, { headers: { authorization: `Bearer ${t}` } });
          if (r.status !== 200) throw new Error(`tenant request answered ${r.status}`);
          await r.arrayBuffer();
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      const text = await metrics();
      rounds.push({
        tenants: label,
        rss: rssParts(server.pid),
        caches: {
          filters: gauge(text, "users_listing_cache_bytes", 'cache="filters"'),
          orders: gauge(text, "users_listing_cache_bytes", 'cache="orders"'),
          views: gauge(text, "users_listing_access_cache_bytes", 'cache="views"'),
          tokens: gauge(text, "users_listing_access_cache_bytes", 'cache="tokens"'),
        },
      });
    }
    return { before, rounds };
  } finally {
    await server.stop();
  }
}

const MiB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

async function main() {
  if (!haveWrk()) throw new Error(WRK_HINT);
  const snapshot = dataset();
  const policyFile = policy();
  log(`access control, ${sizeLabel(ROWS)} rows; wrk -c${CONNECTIONS} -d${DURATION_S}s on 127.0.0.1, the load generator sharing the ${cpus().length} cores with the server`);
  const only = args.only as string | undefined;
  let http: HttpFigure[] | null = null;
  if (only === undefined || only === "http") {
    log("HTTP cheap mix (offsets within one organisation's rows):");
    const baseline = args.baseline === undefined ? null : { root: args.baseline, snapshot: await baselineDataset(args.baseline) };
    http = await httpScenarios(snapshot, policyFile, baseline);
    const ratio = http[1].rps / http[0].rps;
    log(`  tenant / none: ${ratio.toFixed(3)} (${((ratio - 1) * 100).toFixed(1)}% requests/s; server CPU ${((http[1].cpuUs / http[0].cpuUs - 1) * 100).toFixed(0)}% more a request)`);
    for (const figure of http.slice(2, 6)) log(`  ${figure.name.trim()} / none: ${(figure.rps / http[0].rps).toFixed(3)}`);
    if (baseline !== null) {
      log(`  ours ÷ baseline, no access control: ${(http[0].rps / http[6].rps).toFixed(3)} (server CPU ${http[0].cpuUs.toFixed(1)} vs ${http[6].cpuUs.toFixed(1)} µs/request)`);
      log(`  ours ÷ baseline, tenant: ${(http[1].rps / http[7].rps).toFixed(3)} (server CPU ${http[1].cpuUs.toFixed(1)} vs ${http[7].cpuUs.toFixed(1)} µs/request)`);
    }
  }
  let v: Awaited<ReturnType<typeof verifyCosts>> | null = null;
  if (only === undefined || only === "verify") {
    log("JWT verification, in process (µs, each call timed):");
    v = await verifyCosts(snapshot, policyFile);
    for (const [name, q] of [
      ["jose jwtVerify, HS256 (no cache)", v.jose],
      ["authorize: a token verified before (kept)", v.kept],
      ["authorize: a key (SHA-256, constant-time compare)", v.key],
      ["authorize: a new token (verified, view looked up)", v.fresh],
    ] as const) {
      log(`  ${name}: p50 ${q.p50.toFixed(1)} µs, p99 ${q.p99.toFixed(1)} µs`);
    }
  }
  let m: Awaited<ReturnType<typeof memory>> | null = null;
  if (only === undefined || only === "memory") {
    log(`memory: ${TENANTS.toLocaleString("en")} distinct tenants' first requests, twice:`);
    m = await memory(snapshot, policyFile);
    const budget = 256 * MiB + 16 * MiB + 8 * MiB;
    log(`  before: RSS ${mib(m.before.rss)} (anonymous ${mib(m.before.anon)}, file-backed ${mib(m.before.file)}); budget of the caches: ${mib(budget)} (engine 256 MiB, access views 16 MiB, tokens 8 MiB)`);
    for (const r of m.rounds) {
      log(
        `  after tenants ${r.tenants}: RSS ${mib(r.rss.rss)} (+${mib(r.rss.rss - m.before.rss)}): anonymous ${mib(r.rss.anon)} (+${mib(r.rss.anon - m.before.anon)}${r.rss.anon - m.before.anon <= budget ? ", within the budget" : ", OVER the budget"}), file-backed ${mib(r.rss.file)} (+${mib(r.rss.file - m.before.file)}); caches: filters ${mib(r.caches.filters)}, orders ${mib(r.caches.orders)}, views ${mib(r.caches.views)}, tokens ${mib(r.caches.tokens)}`,
      );
    }
  }
  if (args.out !== undefined) writeFileSync(args.out as string, `${JSON.stringify({ rows: ROWS, http, verify: v, memory: m }, null, 2)}\n`);
}

await main();
