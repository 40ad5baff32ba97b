/**
 * Question: how many requests per second does our server answer over HTTP, at what latency,
 * against the ceiling of a raw Bun.serve on this machine? wrk (Debian package) at 64
 * connections, 2 threads, on 127.0.0.1, replaying request lists (bench/wrk/mix.lua):
 *
 * - ceiling: a raw Bun.serve returning a static body the size of a typical cheap-mix response;
 * - floor: the same, reading every request of the cheap mix first (URL, or JSON body parsed):
 *   what any server answering the mix pays before it does any work (bench/floor-server.ts);
 * - cheap mix: Q1, Q2, Q4, Q6, Q8 with varying offsets, GET and POST;
 * - substring mix: Q3 and Q5 with needles drawn from 2,000 different strings, GET and POST;
 * - cheap during substring: two wrk processes at once, 32 connections each;
 * - the cheap and substring mixes against 2 server processes (`--reuse-port`) over one snapshot;
 * - a diagnostic: the cheap mix against our engine behind a bare Bun.serve (bench/raw-server.ts),
 *   to tell the framework's cost from the engine's;
 * - the HTTP envelope: the cheap mix with `Accept-Encoding: gzip, deflate, br, zstd` (what a
 *   browser sends: bodies compressed), with API keys on (every request carries its key), and the
 *   GET half of the mix replayed with each answer's ETag in `If-None-Match` (every answer a 304),
 *   beside the GET half without it;
 * - with `--baseline DIR`, the cheap mix, the substring mix and each envelope scenario against the
 *   server of another checkout too (the commit before a change, say): each scenario on ours, then
 *   at once on the baseline's, and the ratios of their req/s printed at the end.
 *
 * Every scenario gets a freshly started server (cold caches) and a 1 s warm-up of the cheap mix.
 * The load generator shares the machine's cores with the server: that is printed with the figures.
 *
 * With `--peer postgres`, only this instead: PostgreSQL (bench/engines/postgres.ts, loaded and
 * indexed) behind a plain handler over the driver (bench/pg-server.ts, the architecture of AG
 * Grid's server-side examples), and ours, on the cheap mix, the cheap mix without its Q8
 * requests (the two-key sort), and the substring mix; first their
 * answers (data and total) to 200 requests of the mixes are checked equal (up to the order of
 * names in Han characters: PostgreSQL's ICU is older than Bun's); then both servers run
 * each mix and the figures are printed side by side with ratios.
 *
 * Usage: `bun bench/http.ts 100k [--duration 10] [--baseline DIR [--baseline-snapshot F]] [--only search] [--peer postgres] [--out records.json]`
 * (a baseline of another snapshot format serves its own build of the same data; `--only search`
 * runs the search mix alone (the server's memory after it: anonymous and file-backed), against 2
 * processes, then the cheap mix alone and both at once: 2,000 distinct 2-term searches; then CSV
 * exports of every row, one after another, while the cheap mix runs: rows/s, memory growth and
 * the cheap requests' worst wait).
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Dataset, type DatasetStats, ROOT, cacheDir, datasetPaths, parseSize, prng, readNeedles, readStats, sizeLabel } from "./datasets.ts";
import { formatMs } from "./measure.ts";
import { q4Offset } from "./queries.ts";
import { type ServerProcess, type SpawnOptions, cpuMsOf, rssOf, spawnServer } from "./server.ts";
import postgres from "postgres";
import { startLoadedPostgres } from "./engines/postgres.ts";

/** wrk's connections and threads for every scenario (two concurrent runs split the connections). */
export const CONNECTIONS = 64;
export const THREADS = 2;
/** Requests in each generated list. */
const LIST_REQUESTS = 4000;
/** Distinct needles per column in the substring mix (the most frequent ones). */
const MIX_NEEDLES = 1000;

/** One HTTP measurement. */
export interface HttpRecord {
  rows: number;
  scenario: string;
  server: "static" | "floor" | "raw" | "ours" | "ours x2" | "postgres";
  mix: "static" | "cheap" | "substring" | "search";
  connections: number;
  threads: number;
  duration_s: number;
  rps: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  requests: number;
  /** Socket errors and timeouts, and non-2xx/3xx answers. */
  errors: number;
  non2xx: number;
  /** Mean response body bytes (wrk's bytes read / requests, headers included). */
  bytes_per_response: number;
  /** Server RSS after the run, in bytes (both processes for "ours x2"; for "postgres", the Bun handler's alone, not PostgreSQL's). */
  rss_bytes: number | null;
  /** Distinct requests in the replayed list. */
  distinct_requests: number;
  /** The server's CPU time (user + system, all its processes) per request of the run, in µs, where measured; else null. */
  cpu_us_per_request?: number | null;
}

/** True when wrk is on the PATH. */
export function haveWrk(): boolean {
  return Bun.which("wrk") !== null;
}

/** How to install wrk. */
export const WRK_HINT = "wrk is not installed: apt-get update && apt-get install -y wrk (Debian package), or run with --no-http";

/** One request: method, path with query, optional JSON body and extra headers. */
export interface MixRequest {
  method: "GET" | "POST";
  target: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** POST sort models. */
const SORTS = {
  nameAsc: [{ colId: "name", sort: "asc" }],
  nameDesc: [{ colId: "name", sort: "desc" }],
  emailAsc: [{ colId: "email", sort: "asc" }],
  emailDesc: [{ colId: "email", sort: "desc" }],
  idAsc: [{ colId: "id", sort: "asc" }],
  statusAscNameDesc: [
    { colId: "status", sort: "asc" },
    { colId: "name", sort: "desc" },
  ],
} as const;

/** GET or POST for a window at `offset` of `limit` rows (GET pages are aligned to the page size). */
function windowRequest(get: boolean, offset: number, limit: number, params: Record<string, string>, sortModel: readonly object[], filterModel: object): MixRequest {
  if (get) {
    const page = Math.floor(offset / limit) + 1;
    const query = new URLSearchParams({ page: String(page), pageSize: String(limit), ...params });
    return { method: "GET", target: `/api/users?${query.toString()}` };
  }
  return { method: "POST", target: "/api/users", body: { startRow: offset, endRow: offset + limit, sortModel, filterModel } };
}

/** The cheap mix: Q1, Q2, Q4, Q6, Q8 round-robin, random offsets, GET and POST alternating (Q8: POST only). */
export function cheapMix(dataset: Dataset): MixRequest[] {
  return cheapMixOf(readStats(dataset));
}

/** {@link cheapMix} for a dataset's statistics (rows, rows per status). */
export function cheapMixOf(stats: DatasetStats): MixRequest[] {
  const n = stats.rows;
  const next = prng(0xc4ea9);
  const offsetBelow = (limit: number) => next() % Math.max(1, limit);
  const out: MixRequest[] = [];
  for (let i = 0; i < LIST_REQUESTS; i++) {
    const get = Math.floor(i / 5) % 2 === 0;
    switch (i % 5) {
      case 0: // Q1: first page, sort name asc, 10 rows
        out.push(windowRequest(get, 0, 10, { sortBy: "name", sortOrder: "asc" }, SORTS.nameAsc, {}));
        break;
      case 1: // Q2: sort email desc at a random depth
        out.push(windowRequest(get, offsetBelow(n - 100), 100, { sortBy: "email", sortOrder: "desc" }, SORTS.emailDesc, {}));
        break;
      case 2: // Q4: status inactive, sort name desc, offset up to 10,000
        out.push(
          windowRequest(get, offsetBelow(q4Offset(stats) + 1), 100, { sortBy: "name", sortOrder: "desc", "filter[status]": "inactive" }, SORTS.nameDesc, {
            status: { filterType: "set", values: ["inactive"] },
          }),
        );
        break;
      case 3: // Q6: no sort or filter at a random depth
        out.push(windowRequest(get, offsetBelow(n - 100), 100, {}, [], {}));
        break;
      default: // Q8: status asc, name desc (two keys: POST only)
        out.push(windowRequest(false, offsetBelow(n - 100), 100, {}, SORTS.statusAscNameDesc, {}));
    }
  }
  return out;
}

/** The substring mix: Q3 (email contains) and Q5 (active, name contains, offset 200) alternating, GET and POST. */
export function substringMix(dataset: Dataset): { requests: MixRequest[]; needles: number } {
  const needles = readNeedles(dataset);
  const email = needles.email.slice(0, MIX_NEEDLES);
  const name = needles.name.slice(0, MIX_NEEDLES);
  const out: MixRequest[] = [];
  for (let i = 0; i < LIST_REQUESTS; i++) {
    const get = Math.floor(i / 2) % 2 === 0;
    const k = Math.floor(i / 2);
    if (i % 2 === 0) {
      const needle = email[k % email.length];
      out.push(
        windowRequest(get, 0, 100, { sortBy: "id", sortOrder: "asc", "filter[email]": needle }, SORTS.idAsc, {
          email: { filterType: "text", type: "contains", filter: needle },
        }),
      );
    } else {
      const needle = name[k % name.length];
      out.push(
        windowRequest(get, 200, 100, { sortBy: "email", sortOrder: "asc", "filter[status]": "active", "filter[name]": needle }, SORTS.emailAsc, {
          status: { filterType: "set", values: ["active"] },
          name: { filterType: "text", type: "contains", filter: needle },
        }),
      );
    }
  }
  return { requests: out, needles: email.length + name.length };
}

/**
 * The search mix (docs/api.md "Global search"): 2,000 distinct 2-term searches, each a name
 * needle and an email needle, GET `q` (first page of 10, id order) and POST `quickFilter`
 * (rows 0–100, sorted by name) alternating.
 */
export function searchMix(dataset: Dataset): { requests: MixRequest[]; searches: number } {
  const needles = readNeedles(dataset);
  const names = needles.name.slice(0, 50);
  const emails = needles.email.slice(0, 40);
  const texts: string[] = [];
  for (let i = 0; texts.length < 2000 && i < names.length * emails.length; i++) texts.push(`${names[i % names.length]} ${emails[Math.floor(i / names.length) % emails.length]}`);
  const out: MixRequest[] = [];
  for (let i = 0; i < LIST_REQUESTS; i++) {
    const q = texts[i % texts.length];
    if (i % 2 === 0) out.push({ method: "GET", target: `/api/users?${new URLSearchParams({ q, pageSize: "10" })}` });
    else out.push({ method: "POST", target: "/api/users", body: { startRow: 0, endRow: 100, sortModel: SORTS.nameAsc, filterModel: {}, quickFilter: q } });
  }
  return { requests: out, searches: texts.length };
}

/** One request as a line of a mix.lua request list: METHOD<TAB>target[<TAB>JSON body[<TAB>headers]]. */
export function requestLine(r: MixRequest): string {
  const body = r.body === undefined ? "" : JSON.stringify(r.body);
  const headers = Object.entries(r.headers ?? {}).map(([name, value]) => `${name}: ${value}`);
  return headers.length > 0 ? `${r.method}\t${r.target}\t${body}\t${headers.join("|")}` : body === "" ? `${r.method}\t${r.target}` : `${r.method}\t${r.target}\t${body}`;
}

/** Writes a request list for mix.lua; returns its path. */
export function writeList(name: string, requests: MixRequest[]): string {
  const dir = join(cacheDir(), "http");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.tsv`);
  writeFileSync(path, `${requests.map(requestLine).join("\n")}\n`);
  return path;
}

/** Sends requests one by one (each with its own headers, if any, after `headers`); throws on a non-200; returns the body sizes and ETags. */
export async function probe(url: string, requests: MixRequest[], headers: Record<string, string> = {}): Promise<{ sizes: number[]; etags: (string | null)[] }> {
  const sizes: number[] = [];
  const etags: (string | null)[] = [];
  for (const r of requests) {
    const response = await fetch(`${url}${r.target}`, {
      method: r.method,
      headers: r.body === undefined ? { ...headers, ...r.headers } : { ...headers, ...r.headers, "content-type": "application/json" },
      body: r.body === undefined ? undefined : JSON.stringify(r.body),
    });
    const bytes = (await response.arrayBuffer()).byteLength;
    if (response.status !== 200) throw new Error(`${r.method} ${r.target} answered ${response.status}`);
    sizes.push(bytes);
    etags.push(response.headers.get("etag"));
  }
  return { sizes, etags };
}

/** wrk's JSON line. */
export interface WrkSummary {
  requests: number;
  duration_us: number;
  bytes: number;
  errors_connect: number;
  errors_read: number;
  errors_write: number;
  errors_status: number;
  errors_timeout: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  max_us: number;
}

/** Starts wrk replaying `list` against `url`; resolves to its summary. */
export async function runWrk(url: string, list: string, connections: number, durationS: number, headers: string[] = []): Promise<WrkSummary> {
  const child = Bun.spawn(
    ["wrk", `-t${THREADS}`, `-c${connections}`, `-d${durationS}s`, "--timeout", "30s", ...headers.flatMap((h) => ["-H", h]), "-s", join(ROOT, "bench", "wrk", "mix.lua"), url, "--", list],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  await child.exited;
  const line = out.split("\n").find((l) => l.startsWith("WRKJSON "));
  if (child.exitCode !== 0 || line === undefined) throw new Error(`wrk failed (exit ${child.exitCode}): ${(err || out).trim().slice(-500)}`);
  return JSON.parse(line.slice("WRKJSON ".length)) as WrkSummary;
}

/**
 * {@link runWrk}, with the CPU time the processes `pids` used during the run (user + system,
 * /proc) per request answered, in µs.
 */
async function runWrkTimed(pids: readonly number[], url: string, list: string, connections: number, durationS: number, headers: string[] = []): Promise<{ summary: WrkSummary; cpuUs: number }> {
  const cpu = () => pids.reduce((sum, pid) => sum + cpuMsOf(pid), 0);
  const before = cpu();
  const summary = await runWrk(url, list, connections, durationS, headers);
  return { summary, cpuUs: summary.requests === 0 ? 0 : ((cpu() - before) * 1000) / summary.requests };
}

/** A record from a wrk summary. */
function toRecord(
  base: Pick<HttpRecord, "rows" | "scenario" | "server" | "mix" | "distinct_requests">,
  s: WrkSummary,
  connections: number,
  rss: number | null,
): HttpRecord {
  const seconds = s.duration_us / 1e6;
  return {
    ...base,
    connections,
    threads: THREADS,
    duration_s: seconds,
    rps: s.requests / seconds,
    p50_ms: s.p50_us / 1000,
    p90_ms: s.p90_us / 1000,
    p99_ms: s.p99_us / 1000,
    max_ms: s.max_us / 1000,
    requests: s.requests,
    errors: s.errors_connect + s.errors_read + s.errors_write + s.errors_timeout,
    non2xx: s.errors_status,
    bytes_per_response: s.requests === 0 ? 0 : s.bytes / s.requests,
    rss_bytes: rss,
  };
}

/** Starts a bench server script that prints `{"url": …}` on stdout when listening (static-server.ts, raw-server.ts). */
async function spawnScript(script: string, arg: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = Bun.spawn([process.execPath, join(ROOT, "bench", script), arg], { stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const chunk = await reader.read();
    if (chunk.done) throw new Error(`${script} exited before listening`);
    text += new TextDecoder().decode(chunk.value);
  }
  const { url } = JSON.parse(text.split("\n")[0]) as { url: string };
  return {
    url,
    pid: child.pid,
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

/** Starts our server as 1 or 2 processes (the second on the first's port, both with --reuse-port); `options` for one process. */
async function startOurs(dataset: Dataset, processes: 1 | 2, options: SpawnOptions & { snapshot?: string } = {}): Promise<{ url: string; servers: ServerProcess[] }> {
  if (processes === 1) {
    const server = await spawnServer(options.snapshot ?? dataset.snapshot, options);
    return { url: server.url, servers: [server] };
  }
  const first = await spawnServer(dataset.snapshot, { reusePort: true });
  const second = await spawnServer(dataset.snapshot, { reusePort: true, port: first.port });
  return { url: first.url, servers: [first, second] };
}

/** A process's resident set: total, anonymous and file-backed, in bytes (/proc/<pid>/status). */
function memoryParts(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") };
}

/** Bytes in MiB, rounded. */
function mib(bytes: number): string {
  return Math.round(bytes / 2 ** 20).toLocaleString("en");
}

/** RSS of servers, summed. */
function rssSum(servers: { pid: number }[]): number {
  let sum = 0;
  for (const s of servers) sum += rssOf(s.pid);
  return sum;
}

/**
 * Runs every HTTP scenario for one dataset.
 * @param durationS each wrk run's length, in seconds
 */
export async function runHttp(
  dataset: Dataset,
  durationS: number,
  log: (line: string) => void,
  options: { baseline?: string; baselineSnapshot?: string; only?: "search"; peer?: "postgres" } = {},
): Promise<HttpRecord[]> {
  const rows = dataset.rows;
  const label = sizeLabel(rows);
  const cheap = cheapMix(dataset);
  const substring = substringMix(dataset);
  const cheapList = writeList(`cheap-${label}`, cheap);
  const substringList = writeList(`substring-${label}`, substring.requests);
  const distinct = (requests: MixRequest[]) => new Set(requests.map((r) => `${r.method} ${r.target} ${JSON.stringify(r.body ?? null)}`)).size;
  const cheapDistinct = distinct(cheap);
  const substringDistinct = distinct(substring.requests);
  const records: HttpRecord[] = [];
  log(`http ${label}: wrk -t${THREADS} -c${CONNECTIONS} -d${durationS}s on 127.0.0.1; the load generator shares the ${cpus().length} cores with the server`);

  // Check the mixes answer 200, and size a typical response for the ceiling.
  let typicalBytes = 0;
  {
    const { servers, url } = await startOurs(dataset, 1);
    try {
      const { sizes } = await probe(url, cheap.slice(0, 100));
      await probe(url, substring.requests.slice(0, 40));
      sizes.sort((a, b) => a - b);
      typicalBytes = sizes[Math.floor(sizes.length / 2)];
    } finally {
      for (const s of servers) await s.stop();
    }
  }
  if (options.peer === "postgres") {
    // The cheap mix without its Q8 requests (a two-key sort no single-column index serves): what the rest of it costs.
    const noQ8 = cheap.filter((_, i) => i % 5 !== 4);
    const mixes = [
      { mix: "cheap" as const, list: cheapList, requests: cheap, title: "cheap mix", distinct: cheapDistinct },
      { mix: "cheap" as const, list: writeList(`cheap-no-q8-${label}`, noQ8), requests: noQ8, title: "cheap mix without Q8", distinct: distinct(noQ8) },
      { mix: "substring" as const, list: substringList, requests: substring.requests, title: `substring mix (${substring.needles} needles)`, distinct: substringDistinct },
    ];
    return await runPostgresPeer(dataset, durationS, log, mixes);
  }

  {
    const server = await spawnScript("static-server.ts", String(typicalBytes));
    try {
      const staticList = writeList("static", [{ method: "GET", target: "/" }]);
      await runWrk(server.url, staticList, CONNECTIONS, 1);
      const { summary: s, cpuUs } = await runWrkTimed([server.pid], server.url, staticList, CONNECTIONS, durationS);
      records.push({ ...toRecord({ rows, scenario: `ceiling: raw Bun.serve, static ${typicalBytes} B body`, server: "static", mix: "static", distinct_requests: 1 }, s, CONNECTIONS, rssOf(server.pid)), cpu_us_per_request: cpuUs });
    } finally {
      await server.stop();
    }
    log(describe(records[records.length - 1]));
  }

  {
    const server = await spawnScript("floor-server.ts", String(typicalBytes));
    try {
      await probe(server.url, cheap.slice(0, 20));
      await runWrk(server.url, cheapList, CONNECTIONS, 1);
      const { summary: s, cpuUs } = await runWrkTimed([server.pid], server.url, cheapList, CONNECTIONS, durationS);
      records.push({
        ...toRecord(
          { rows, scenario: `floor: raw Bun.serve reading each cheap-mix request, static ${typicalBytes} B body`, server: "floor", mix: "cheap", distinct_requests: cheapDistinct },
          s,
          CONNECTIONS,
          rssOf(server.pid),
        ),
        cpu_us_per_request: cpuUs,
      });
    } finally {
      await server.stop();
    }
    log(describe(records[records.length - 1]));
  }

  try {
    // Diagnostic: the same parse → execute → serialize path behind a bare Bun.serve (no framework).
    const server = await spawnScript("raw-server.ts", dataset.snapshot);
    try {
      await probe(server.url, cheap.slice(0, 20));
      await runWrk(server.url, cheapList, CONNECTIONS, 1);
      const { summary: s, cpuUs } = await runWrkTimed([server.pid], server.url, cheapList, CONNECTIONS, durationS);
      records.push({
        ...toRecord({ rows, scenario: "our engine behind a bare Bun.serve (no router, no envelope): cheap mix", server: "raw", mix: "cheap", distinct_requests: cheapDistinct }, s, CONNECTIONS, rssOf(server.pid)),
        cpu_us_per_request: cpuUs,
      });
    } finally {
      await server.stop();
    }
    log(describe(records[records.length - 1]));
  } catch (error) {
    log(`http ${label}: the bare Bun.serve diagnostic failed (bench/raw-server.ts may need updating to src/http/app.ts): ${(error as Error).message}`);
  }

  // One scenario: a fresh server (1 or 2 processes), a 1 s warm-up, the runs; RSS taken after.
  const scenario = async (
    processes: 1 | 2,
    run: (url: string, server: HttpRecord["server"], processes: ServerProcess[]) => Promise<HttpRecord[]>,
    spawnOptions: SpawnOptions & { snapshot?: string } = {},
    warmHeaders: string[] = [],
    after: (servers: ServerProcess[]) => void = () => {},
  ) => {
    const { url, servers } = await startOurs(dataset, processes, spawnOptions);
    try {
      await runWrk(url, cheapList, CONNECTIONS, 1, warmHeaders);
      const results = await run(url, processes === 1 ? "ours" : "ours x2", servers);
      after(servers);
      const rss = rssSum(servers);
      for (const r of results) {
        r.rss_bytes = rss;
        records.push(r);
        log(describe(r));
      }
    } finally {
      for (const s of servers) await s.stop();
    }
  };
  if (options.only === "search") {
    const search = searchMix(dataset);
    const searchList = writeList(`search-${label}`, search.requests);
    const searchDistinct = distinct(search.requests);
    let memory = "";
    await scenario(1, async (url, server) => {
      await probe(url, search.requests.slice(0, 20));
      const alone = await runWrk(url, searchList, CONNECTIONS, durationS);
      return [toRecord({ rows, scenario: `ours: search mix (${search.searches} searches)`, server, mix: "search", distinct_requests: searchDistinct }, alone, CONNECTIONS, null)];
    }, {}, [], (servers) => {
      // the server's memory after the search mix: anonymous (heap, caches) and file-backed (the mapped snapshot's pages)
      const parts = memoryParts(servers[0].pid);
      memory = `http ${label} memory after the search mix: RSS ${mib(parts.rss)} MiB = anonymous ${mib(parts.anon)} MiB + file-backed ${mib(parts.file)} MiB (snapshot file ${mib(statSync(dataset.snapshot).size)} MiB)`;
    });
    log(memory);
    await scenario(2, async (url, server) => {
      const s = await runWrk(url, searchList, CONNECTIONS, durationS);
      return [toRecord({ rows, scenario: `ours, 2 processes (--reuse-port): search mix (${search.searches} searches)`, server, mix: "search", distinct_requests: searchDistinct }, s, CONNECTIONS, null)];
    });
    await scenario(1, async (url, server) => {
      const half = CONNECTIONS / 2;
      const cheapAlone = await runWrk(url, cheapList, half, durationS);
      const [sea, chp] = await Promise.all([runWrk(url, searchList, half, durationS), runWrk(url, cheapList, half, durationS)]);
      return [
        toRecord({ rows, scenario: "ours: cheap mix alone (half the connections)", server, mix: "cheap", distinct_requests: cheapDistinct }, cheapAlone, half, null),
        toRecord({ rows, scenario: "ours: search mix, with the cheap mix at once", server, mix: "search", distinct_requests: searchDistinct }, sea, half, null),
        toRecord({ rows, scenario: "ours: cheap mix during the search mix", server, mix: "cheap", distinct_requests: cheapDistinct }, chp, half, null),
      ];
    });
    // Exports of every row as CSV (curl reading to /dev/null), one after another, while the cheap
    // mix runs: the exports' rows/s, the server's anonymous memory growth, and the cheap requests'
    // worst wait (wrk's max) beside the cheap mix alone on the same server.
    let exportLine = "";
    await scenario(1, async (url, server, [first]) => {
      const serverPid = first.pid;
      const half = CONNECTIONS / 2;
      const cheapAlone = await runWrk(url, cheapList, half, durationS);
      const before = memoryParts(serverPid).anon;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, memoryParts(serverPid).anon);
      }, 50);
      const rates: number[] = [];
      let stop = false;
      const exporting = (async () => {
        while (!stop) {
          const curl = Bun.spawn(["curl", "-s", "-o", "/dev/null", "-w", "%{time_total} %{http_code}", `${url}/api/users/export?format=csv`], { stdout: "pipe" });
          const [secondsText, status] = (await new Response(curl.stdout).text()).trim().split(" ");
          if (status !== "200") throw new Error(`export: HTTP ${status}`);
          rates.push(rows / Number(secondsText));
        }
      })();
      let during: WrkSummary;
      try {
        during = await runWrk(url, cheapList, half, durationS);
      } finally {
        stop = true;
        await exporting;
        clearInterval(sampler);
      }
      rates.sort((a, b) => a - b);
      exportLine =
        `http ${label} CSV exports of ${rows.toLocaleString("en")} rows during the cheap mix: ${rates.length} exports, ` +
        `${(rates[Math.floor(rates.length / 2)] / 1e6).toFixed(2)} M rows/s p50 (${(rates[0] / 1e6).toFixed(2)}–${(rates[rates.length - 1] / 1e6).toFixed(2)}), ` +
        `anonymous RSS ${mib(before)} MiB before, peak growth ${mib(peak - before)} MiB; ` +
        `cheap mix max ${formatMs(cheapAlone.max_us / 1000)} alone, ${formatMs(during.max_us / 1000)} during the exports`;
      return [
        toRecord({ rows, scenario: "ours: cheap mix alone, before the exports (half the connections)", server, mix: "cheap", distinct_requests: cheapDistinct }, cheapAlone, half, null),
        toRecord({ rows, scenario: "ours: cheap mix during CSV exports of every row", server, mix: "cheap", distinct_requests: cheapDistinct }, during, half, null),
      ];
    });
    log(exportLine);
    return records;
  }
  const mixes = [
    { mix: "cheap" as const, list: cheapList, title: "cheap mix", distinct: cheapDistinct },
    { mix: "substring" as const, list: substringList, title: `substring mix (${substring.needles} needles)`, distinct: substringDistinct },
  ];
  // With a baseline, each scenario below runs on our server and then on the baseline's, one
  // after the other (the machine's drift between the two is then seconds, not minutes), and the
  // ratio of their req/s is printed: what a change did to the cheap mix and the HTTP envelope.
  const trees: { name: string; spawn: SpawnOptions & { snapshot?: string } }[] = [{ name: "ours", spawn: {} }];
  if (options.baseline !== undefined) trees.push({ name: `baseline (${options.baseline})`, spawn: { root: options.baseline, snapshot: options.baselineSnapshot } });
  const ratios: string[] = [];
  /**
   * Runs one scenario on each tree (ours, then the baseline's); `title` names it, `measure` runs
   * wrk against a started server and returns its summaries (one record each, titled in order).
   */
  const paired = async (
    titles: { title: string; mix: HttpRecord["mix"]; distinct: number; connections?: number }[],
    measure: (url: string, pids: number[]) => Promise<(WrkSummary | { summary: WrkSummary; cpuUs: number })[]>,
    spawn: SpawnOptions = {},
    warmHeaders: string[] = [],
  ) => {
    const rates: number[][] = [];
    for (const tree of trees) {
      await scenario(
        1,
        async (url, server, processes) => {
          const measured = await measure(
            url,
            processes.map((p) => p.pid),
          );
          const summaries = measured.map((m) => ("summary" in m ? m.summary : m));
          rates.push(summaries.map((x) => x.requests / (x.duration_us / 1e6)));
          return summaries.map((x, i) => ({
            ...toRecord({ rows, scenario: `${tree.name}: ${titles[i].title}`, server, mix: titles[i].mix, distinct_requests: titles[i].distinct }, x, titles[i].connections ?? CONNECTIONS, null),
            cpu_us_per_request: "cpuUs" in measured[i] ? measured[i].cpuUs : null,
          }));
        },
        { ...spawn, ...tree.spawn, env: { ...spawn.env, ...tree.spawn.env } },
        warmHeaders,
      );
    }
    if (rates.length === 2) for (const [i, t] of titles.entries()) ratios.push(`http ${label} ours ÷ baseline, ${t.title}: ${(rates[0][i] / rates[1][i]).toFixed(3)}× (${Math.round(rates[0][i])} vs ${Math.round(rates[1][i])} req/s)`);
  };

  await paired([{ title: "cheap mix", mix: "cheap", distinct: cheapDistinct }], async (url, pids) => [await runWrkTimed(pids, url, cheapList, CONNECTIONS, durationS)]);
  {
    // Where a cheap request's server CPU goes, from the runs above (each server's CPU time over its requests).
    const cpuOf = (server: HttpRecord["server"], scenario?: string) => records.find((r) => r.server === server && (scenario === undefined || r.scenario === scenario))?.cpu_us_per_request ?? null;
    const [ceiling, floor, raw, ours] = [cpuOf("static"), cpuOf("floor"), cpuOf("raw"), cpuOf("ours", "ours: cheap mix")];
    if (ceiling !== null && floor !== null && ours !== null) {
      const us = (x: number) => `${x.toFixed(1)} µs`;
      log(
        `http ${label} server CPU per cheap-mix request: ${us(ours)} = static answer ${us(ceiling)} (the ceiling: sockets, HTTP, a static body) + reading the request ${us(floor - ceiling)} (the floor) + ` +
          (raw === null ? `answering it ${us(ours - floor)}` : `parse, engine and serialise ${us(raw - floor)} (the bare Bun.serve server) + Elysia and the envelope ${us(ours - raw)}`),
      );
    }
  }

  // The HTTP envelope: compression, API keys, conditional requests.
  const browserEncodings = "Accept-Encoding: gzip, deflate, br, zstd";
  await paired([{ title: `cheap mix, ${browserEncodings}`, mix: "cheap", distinct: cheapDistinct }], async (url) => [await runWrk(url, cheapList, CONNECTIONS, durationS, [browserEncodings])]);
  const key = "bench-key-0123456789abcdef";
  await paired(
    [{ title: "cheap mix, API keys on", mix: "cheap", distinct: cheapDistinct }],
    async (url) => [await runWrk(url, cheapList, CONNECTIONS, durationS, [`Authorization: Bearer ${key}`])],
    { env: { API_KEYS: `other-key,${key}` } },
    [`Authorization: Bearer ${key}`],
  );
  const gets = cheap.filter((r) => r.method === "GET");
  const getList = writeList(`cheap-get-${label}`, gets);
  const distinctGets = distinct(gets);
  await paired(
    [
      { title: "the cheap mix's GETs", mix: "cheap", distinct: distinctGets },
      // wrk counts answers over 399 as errors: a 304 is not one
      { title: "the cheap mix's GETs with If-None-Match (304)", mix: "cheap", distinct: distinctGets },
    ],
    async (url) => {
      // identity: wrk asks for no coding, and each coding has its own tag (fetch asks for gzip, br, zstd by default)
      const { etags } = await probe(url, gets, { "accept-encoding": "identity" });
      if (etags.some((e) => e === null)) throw new Error("a GET answer has no ETag");
      const revalidate = gets.map((r, i) => ({ ...r, headers: { "If-None-Match": etags[i] as string } }));
      const revalidateList = writeList(`cheap-get-304-${label}`, revalidate);
      return [await runWrk(url, getList, CONNECTIONS, durationS), await runWrk(url, revalidateList, CONNECTIONS, durationS)];
    },
  );
  if (trees.length === 2) {
    await paired([{ title: mixes[1].title, mix: "substring", distinct: substringDistinct }], async (url) => [await runWrk(url, substringList, CONNECTIONS, durationS)]);
    for (const line of ratios) log(line);
  }

  for (const processes of [1, 2] as const) {
    const name = processes === 1 ? "ours" : "ours, 2 processes (--reuse-port)";
    for (const m of mixes) {
      // one process's cheap mix (and, with a baseline, its substring mix) ran above, beside the baseline's
      if (processes === 1 && (m.mix === "cheap" || trees.length === 2)) continue;
      await scenario(processes, async (url, server) => {
        const s = await runWrk(url, m.list, CONNECTIONS, durationS);
        return [toRecord({ rows, scenario: `${name}: ${m.title}`, server, mix: m.mix, distinct_requests: m.distinct }, s, CONNECTIONS, null)];
      });
    }
    if (processes === 2) continue;
    await scenario(1, async (url, server) => {
      const half = CONNECTIONS / 2;
      const [sub, chp] = await Promise.all([runWrk(url, substringList, half, durationS), runWrk(url, cheapList, half, durationS)]);
      return [
        toRecord({ rows, scenario: "ours: substring mix, with the cheap mix at once", server, mix: "substring", distinct_requests: substringDistinct }, sub, half, null),
        toRecord({ rows, scenario: "ours: cheap mix during the substring mix", server, mix: "cheap", distinct_requests: cheapDistinct }, chp, half, null),
      ];
    });
  }
  return records;
}

/** Requests sent one by one; each answer's `{data, total}` as JSON text. @throws on a non-200 */
async function answersOf(url: string, requests: MixRequest[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of requests) {
    const response = await fetch(`${url}${r.target}`, {
      method: r.method,
      headers: r.body === undefined ? {} : { "content-type": "application/json" },
      body: r.body === undefined ? undefined : JSON.stringify(r.body),
    });
    if (response.status !== 200) throw new Error(`${url}: ${r.method} ${r.target} answered ${response.status}: ${await response.text()}`);
    const { data, total } = (await response.json()) as { data: unknown; total: number };
    out.push(JSON.stringify({ data, total }));
  }
  return out;
}

/**
 * True when two answers (`{data, total}` JSON) have the same total and page length, and every
 * position whose row differs holds a name with a Han character in both: the one known difference
 * between PostgreSQL's ICU collation and ours (bench/results/postgres.md).
 */
function hanOrderOnly(ours: string, theirs: string): boolean {
  type Page = { data: { id: number; name: string }[]; total: number };
  const a = JSON.parse(ours) as Page;
  const b = JSON.parse(theirs) as Page;
  if (a.total !== b.total || a.data.length !== b.data.length) return false;
  const han = /\p{Script=Han}/u;
  for (let i = 0; i < a.data.length; i++) {
    if (JSON.stringify(a.data[i]) !== JSON.stringify(b.data[i]) && !(han.test(a.data[i].name) && han.test(b.data[i].name))) return false;
  }
  return true;
}

/**
 * Waits until PostgreSQL at `url` runs no client query (other than this one), polling every
 * 100 ms for at most 60 s; with `cancel`, first cancels the running ones (pg_cancel_backend).
 */
async function quiesce(url: string, cancel: boolean): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    if (cancel) await sql`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()`;
    for (let i = 0; i < 600; i++) {
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()`;
      if (n === 0) return;
      await Bun.sleep(100);
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** A mix as {@link runPostgresPeer} runs it. */
interface PeerMix {
  mix: "cheap" | "substring";
  list: string;
  requests: MixRequest[];
  title: string;
  distinct: number;
}

/**
 * `--peer postgres`: PostgreSQL loaded and indexed (bench/engines/postgres.ts) behind
 * bench/pg-server.ts, and ours, on each mix. First the answers of both to the first 100 requests
 * of each mix must be equal, or differ only in the order of Han-character names (the ICU version
 * difference; counted and logged), else it throws, naming the request. Then per
 * mix: ours (a fresh server, 1 s warm-up of the cheap mix, the run), then PostgreSQL (a fresh
 * handler process and pool over the same, prewarmed database; a 1 s warm-up of the cheap mix on 2
 * connections, then a wait until PostgreSQL is idle; the run; after it, the queries still running
 * are cancelled). Prints the
 * figures side by side; returns the records (server "ours" and "postgres").
 */
async function runPostgresPeer(dataset: Dataset, durationS: number, log: (line: string) => void, mixes: PeerMix[]): Promise<HttpRecord[]> {
  const rows = dataset.rows;
  const cheapList = mixes[0].list;
  const records: HttpRecord[] = [];
  const pg = await startLoadedPostgres(dataset, log);
  try {
    log(`http ${sizeLabel(rows)}: ${pg.version}; loaded and indexed in ${formatMs(pg.open.buildMs)}`);
    {
      const ours = await startOurs(dataset, 1);
      const peer = await spawnScript("pg-server.ts", pg.url);
      try {
        for (const m of mixes) {
          const sample = m.requests.slice(0, 100);
          const [a, b] = [await answersOf(ours.url, sample), await answersOf(peer.url, sample)];
          let equal = 0;
          let han = 0;
          for (let i = 0; i < sample.length; i++) {
            if (a[i] === b[i]) {
              equal++;
              continue;
            }
            if (!hanOrderOnly(a[i], b[i])) {
              const r = sample[i];
              throw new Error(`${m.title}: request ${i} (${r.method} ${r.target} ${JSON.stringify(r.body ?? "")}) answered differently: ours ${a[i].slice(0, 300)}, postgres ${b[i].slice(0, 300)}`);
            }
            han++;
          }
          log(
            `http ${sizeLabel(rows)} ${m.title}: of the first ${sample.length} answers (data, total), ${equal} of PostgreSQL's equal ours` +
              (han > 0 ? `, ${han} differ only in the order of names in Han characters (${pg.version.split("; ")[1]} against Bun's ICU ${process.versions.icu})` : ""),
          );
        }
      } finally {
        await peer.stop();
        for (const s of ours.servers) await s.stop();
      }
    }
    for (const m of mixes) {
      {
        const { url, servers } = await startOurs(dataset, 1);
        try {
          await runWrk(url, cheapList, CONNECTIONS, 1);
          const s = await runWrk(url, m.list, CONNECTIONS, durationS);
          records.push(toRecord({ rows, scenario: `ours: ${m.title}`, server: "ours", mix: m.mix, distinct_requests: m.distinct }, s, CONNECTIONS, rssSum(servers)));
        } finally {
          for (const s of servers) await s.stop();
        }
        log(describe(records[records.length - 1]));
      }
      {
        const peer = await spawnScript("pg-server.ts", pg.url);
        try {
          // A warm-up on 2 connections (a 64-connection one would leave a backlog of slow sorts
          // running into the timed run), then wait until PostgreSQL is idle.
          await runWrk(peer.url, cheapList, 2, 1);
          await quiesce(pg.url, false);
          const s = await runWrk(peer.url, m.list, CONNECTIONS, durationS);
          records.push(toRecord({ rows, scenario: `postgres (pg-server.ts): ${m.title}`, server: "postgres", mix: m.mix, distinct_requests: m.distinct }, s, CONNECTIONS, rssOf(peer.pid)));
        } finally {
          await peer.stop();
          // Queries still running for requests wrk has given up on must not load the next scenario.
          await quiesce(pg.url, true);
        }
        log(describe(records[records.length - 1]));
      }
    }
  } finally {
    await pg.stop();
  }
  for (const m of mixes) {
    const ours = records.find((r) => r.server === "ours" && r.scenario.endsWith(`: ${m.title}`));
    const peer = records.find((r) => r.server === "postgres" && r.scenario.endsWith(`: ${m.title}`));
    if (ours === undefined || peer === undefined) continue;
    log(
      `http ${sizeLabel(rows)} ${m.title}: ours ${Math.round(ours.rps)} req/s (p50 ${formatMs(ours.p50_ms)}, p99 ${formatMs(ours.p99_ms)}), ` +
        `postgres ${Math.round(peer.rps)} req/s (p50 ${formatMs(peer.p50_ms)}, p99 ${formatMs(peer.p99_ms)}); ` +
        `ours/postgres req/s ${(ours.rps / peer.rps).toFixed(1)}×, postgres/ours p50 ${(peer.p50_ms / ours.p50_ms).toFixed(1)}×, p99 ${(peer.p99_ms / ours.p99_ms).toFixed(1)}×`,
    );
  }
  return records;
}

/** One line per record for logs. */
export function describe(r: HttpRecord): string {
  const errors = r.errors + r.non2xx > 0 ? `, ${r.errors} errors, ${r.non2xx} non-2xx` : "";
  const cpu = r.cpu_us_per_request === undefined || r.cpu_us_per_request === null ? "" : `, server CPU ${r.cpu_us_per_request.toFixed(1)} µs/request`;
  return `http ${sizeLabel(r.rows)} ${r.scenario}: ${Math.round(r.rps)} req/s, p50 ${formatMs(r.p50_ms)}, p99 ${formatMs(r.p99_ms)} (${r.connections} conns${errors}${cpu})`;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    options: { duration: { type: "string", default: "10" }, baseline: { type: "string" }, "baseline-snapshot": { type: "string" }, only: { type: "string" }, peer: { type: "string" }, out: { type: "string" } },
    allowPositionals: true,
  });
  if (!haveWrk()) {
    process.stderr.write(`${WRK_HINT}\n`);
    process.exit(1);
  }
  const dataset = datasetPaths(parseSize(positionals[0] ?? "100k"));
  if (values.peer !== undefined && values.peer !== "postgres") {
    process.stderr.write(`unknown --peer ${values.peer}; known: postgres\n`);
    process.exit(2);
  }
  const records = await runHttp(dataset, Number(values.duration), (line) => process.stderr.write(`${line}\n`), {
    baseline: values.baseline,
    baselineSnapshot: values["baseline-snapshot"],
    only: values.only === "search" ? "search" : undefined,
    peer: values.peer === "postgres" ? "postgres" : undefined,
  });
  if (values.out !== undefined) writeFileSync(values.out, `${JSON.stringify(records, null, 2)}\n`);
  console.table(
    records.map((r) => ({
      scenario: r.scenario,
      "req/s": Math.round(r.rps),
      "MB/s": ((r.rps * r.bytes_per_response) / 1e6).toFixed(1),
      "B/answer": Math.round(r.bytes_per_response),
      p50: formatMs(r.p50_ms),
      p99: formatMs(r.p99_ms),
      conns: r.connections,
      errors: r.errors + r.non2xx,
    })),
  );
}
