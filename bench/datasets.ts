/**
 * Question: what data does every engine answer from? The benchmark datasets: N generated users
 * (src/generate/users.ts, seed 1), cached outside git under bench/.cache/<key>/, where <key>
 * hashes the sources that decide the data (generator, schema) and the peer files' layout
 * version. The snapshot also depends on the store, snapshot and collation sources: their hash is
 * kept with the build, and a snapshot built from other sources is rebuilt (up to
 * {@link AUTO_REBUILD_ROWS} rows, or with `rebuild`) or reported as stale.
 *
 * Per row count N:
 * - `users-N.snap`: our snapshot, built by `snapshot build` (buildSnapshotFromFile) from the
 *   users generated into a temporary NDJSON file; `users-N.build.json` keeps its BuildReport
 *   (the build is timed once, when the cache is made);
 * - `users-N/`: what the peers load, column by column: `ids.f64`, `status.u8` (status codes),
 *   `name.txt`, `email.txt` and their folded forms `name_folded.txt`, `email_folded.txt`
 *   (fold() computed here, independently of the snapshot), one value a line; `name_rank.u32`,
 *   `email_rank.u32` (the snapshot's rankByRow: the collation rank, equal for collator-equal
 *   values); `users.csv` (the same eight columns, for DuckDB's read_csv); `needles.json`
 *   (the most frequent 3-letter substrings of folded e-mail local parts and names) and
 *   `stats.json`.
 *
 * Usage: `bun bench/datasets.ts 10k 100k` builds what is missing (the snapshot, then the peer
 * files, each in a child process: `--step snapshot|peers`) and prints where it is.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { fold } from "../src/collation/collation.ts";
import { csvField, generateUsers, writeUsers } from "../src/generate/users.ts";
import { STATUS_VALUES } from "../src/generate/record.ts";
import { type BuildReport, buildSnapshotFromFile } from "../src/snapshot/build-file.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { type Partition, keyColumn, storedColumn } from "../src/store/types.ts";

/** The generator seed of every dataset. */
export const SEED = 1;

/** Repository root and the cache root. */
export const ROOT = resolve(import.meta.dir, "..");
export const CACHE_ROOT = join(ROOT, "bench", ".cache");

/** Sources whose content decides the data; a change gives a new cache key. */
const KEY_SOURCES = ["src/generate", "src/schema"];
/** The layout of the peer files and needles: bump it when this file changes what it writes. */
const PEER_FILES_VERSION = 1;
/** Sources whose content decides the snapshot built from the data. */
const SNAPSHOT_SOURCES = ["src/store", "src/snapshot", "src/collation"];
/** Stale snapshots up to this many rows are rebuilt without asking (about 10 s at 1M). */
export const AUTO_REBUILD_ROWS = 1_000_000;

/** Needles kept per column (the most frequent), and rows sampled to rank them. */
const NEEDLES_PER_COLUMN = 2000;
const NEEDLE_SAMPLE_ROWS = 200_000;

/** Dataset statistics the query builders need. */
export interface DatasetStats {
  rows: number;
  /** Rows per status code (STATUS_VALUES order). */
  statusCounts: number[];
}

/** 3-letter substrings of folded values, distinct, the most frequent first. */
export interface Needles {
  /** From e-mail local parts, ASCII letters only. */
  email: string[];
  /** From names, letters only (any script). */
  name: string[];
}

/** Paths of one dataset. */
export interface Dataset {
  rows: number;
  snapshot: string;
  buildReport: string;
  peerDir: string;
  csv: string;
}

/** The peers' columns, read back from the cache. */
export interface PeerColumns {
  rows: number;
  ids: Float64Array;
  statusCodes: Uint8Array;
  names: string[];
  emails: string[];
  namesFolded: string[];
  emailsFolded: string[];
  nameRanks: Uint32Array;
  emailRanks: Uint32Array;
}

/** "10k" → 10000, "1m" → 1000000, "2500" → 2500. */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (m === null) throw new Error(`bad size ${JSON.stringify(text)}: use e.g. 10k, 100k, 1m, 10m`);
  const scale = m[2].toLowerCase() === "k" ? 1e3 : m[2].toLowerCase() === "m" ? 1e6 : 1;
  return Math.round(Number(m[1]) * scale);
}

/** 10000 → "10k", 1000000 → "1m". */
export function sizeLabel(rows: number): string {
  if (rows >= 1e6 && rows % 1e6 === 0) return `${rows / 1e6}m`;
  if (rows >= 1e3 && rows % 1e3 === 0) return `${rows / 1e3}k`;
  return String(rows);
}

/** Files under `path` (recursively), sorted. */
function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  const out: string[] = [];
  for (const entry of readdirSync(path).sort()) out.push(...filesUnder(join(path, entry)));
  return out;
}

/** A hash of the contents of files under `sources`. */
function sourcesHash(sources: string[], salt = ""): string {
  const hash = createHash("sha256");
  hash.update(salt);
  for (const source of sources) {
    for (const file of filesUnder(join(ROOT, source))) {
      hash.update(file.slice(ROOT.length));
      hash.update(readFileSync(file));
    }
  }
  return hash.digest("hex").slice(0, 12);
}

/** The cache key: a hash of {@link KEY_SOURCES} and {@link PEER_FILES_VERSION}. */
export function cacheKey(): string {
  return sourcesHash(KEY_SOURCES, `peer-files-v${PEER_FILES_VERSION}`);
}

/** The hash of the sources a snapshot is built by ({@link SNAPSHOT_SOURCES}). */
export function snapshotSourcesHash(): string {
  return sourcesHash(SNAPSHOT_SOURCES);
}

/** This key's cache directory. */
export function cacheDir(key = cacheKey()): string {
  return join(CACHE_ROOT, key);
}

/** Paths of the dataset of `rows` rows under `dir`. */
export function datasetPaths(rows: number, dir = cacheDir()): Dataset {
  const label = sizeLabel(rows);
  const peerDir = join(dir, `users-${label}`);
  return {
    rows,
    snapshot: join(dir, `users-${label}.snap`),
    buildReport: join(dir, `users-${label}.build.json`),
    peerDir,
    csv: join(peerDir, "users.csv"),
  };
}

/** Removes cache directories of other keys (old sources' datasets); returns what it removed. */
export function pruneStaleCaches(keep: string): string[] {
  if (!existsSync(CACHE_ROOT)) return [];
  const removed: string[] = [];
  for (const entry of readdirSync(CACHE_ROOT)) {
    if (entry === keep || entry.startsWith(".")) continue;
    if (!/^[0-9a-f]{12}$/.test(entry)) continue;
    rmSync(join(CACHE_ROOT, entry), { recursive: true, force: true });
    removed.push(entry);
  }
  return removed;
}

/** The snapshot build report of a dataset (timed when the cache was made), with the date and sources hash. */
export function readBuildReport(dataset: Dataset): BuildReport & { builtAt: string; wallMs: number; sources: string } {
  return JSON.parse(readFileSync(dataset.buildReport, "utf8"));
}

export function readStats(dataset: Dataset): DatasetStats {
  return JSON.parse(readFileSync(join(dataset.peerDir, "stats.json"), "utf8"));
}

export function readNeedles(dataset: Dataset): Needles {
  return JSON.parse(readFileSync(join(dataset.peerDir, "needles.json"), "utf8"));
}

/** True when both the snapshot and the peer files are there. */
export function datasetReady(dataset: Dataset): boolean {
  return existsSync(dataset.snapshot) && existsSync(dataset.buildReport) && existsSync(join(dataset.peerDir, "done"));
}

/** mulberry32: a seeded 32-bit PRNG returning u32s. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Fisher–Yates with a seeded PRNG, in place. */
export function shuffle<T>(values: T[], seed: number): T[] {
  const next = prng(seed);
  for (let i = values.length - 1; i > 0; i--) {
    const j = next() % (i + 1);
    const t = values[i];
    values[i] = values[j];
    values[j] = t;
  }
  return values;
}

/** Lower-case ASCII letters. */
const ASCII_LETTERS = /^[a-z]{3}$/;
/** Three letters of any script. */
const LETTERS = /^\p{L}{3}$/u;

/**
 * The 3-letter substrings of `values` (e-mails: their local part) that hold in the most of them,
 * most frequent first (ties alphabetical): the fragments people type ("mar", "son", "ova").
 * `values` is a sample of rows spread evenly over the dataset ({@link NEEDLE_SAMPLE_ROWS}).
 */
function frequentNeedles(values: string[], accept: RegExp, emailLocalPart: boolean): string[] {
  const counts = new Map<string, number>();
  const inRow = new Set<string>();
  for (let row = 0; row < values.length; row++) {
    let value = values[row];
    if (emailLocalPart) value = value.slice(0, value.indexOf("@"));
    const chars = Array.from(value);
    inRow.clear();
    for (let i = 0; i + 3 <= chars.length; i++) {
      const needle = chars[i] + chars[i + 1] + chars[i + 2];
      if (accept.test(needle)) inRow.add(needle);
    }
    for (const needle of inRow) counts.set(needle, (counts.get(needle) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, NEEDLES_PER_COLUMN)
    .map(([needle]) => needle);
}

/** Writes `data` to `path` atomically (temporary file + rename). */
function writeAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/**
 * Builds the snapshot of a dataset and records its report. The users are generated into an
 * NDJSON file first (not timed; deleted after), and the build timed is `snapshot build` of
 * that file (src/snapshot/build-file.ts `buildSnapshotFromFile`): reading and validating the
 * input, building the indexes on both cores, writing the snapshot.
 */
export async function buildSnapshot(dataset: Dataset, log: (line: string) => void): Promise<BuildReport> {
  const input = `${dataset.snapshot}.${process.pid}.ndjson`;
  log(`generating ${dataset.rows} users into ${input}`);
  try {
    await writeUsers(input, { count: dataset.rows, seed: SEED, format: "ndjson" });
    log(`building snapshot ${dataset.snapshot} from ${input}`);
    const started = performance.now();
    const report = await buildSnapshotFromFile(input, dataset.snapshot);
    const wallMs = performance.now() - started;
    writeAtomic(dataset.buildReport, JSON.stringify({ ...report, wallMs, builtAt: new Date().toISOString(), sources: snapshotSourcesHash() }, null, 2));
    log(`built ${dataset.snapshot}: ${(report.bytes / 2 ** 20).toFixed(1)} MiB in ${(wallMs / 1000).toFixed(1)} s`);
    return report;
  } finally {
    rmSync(input, { force: true });
  }
}

/** A text file written in large chunks as values arrive, then renamed into place. */
class ChunkedFile {
  private readonly fd: number;
  private parts: string[] = [];
  private chars = 0;
  private readonly tmp: string;

  constructor(private readonly path: string) {
    this.tmp = `${path}.${process.pid}.tmp`;
    this.fd = openSync(this.tmp, "w");
  }

  write(text: string): void {
    this.parts.push(text);
    this.chars += text.length;
    // About 4 MB of text per write call.
    if (this.chars >= 1 << 22) this.flush();
  }

  private flush(): void {
    if (this.parts.length > 0) writeSync(this.fd, this.parts.join(""));
    this.parts = [];
    this.chars = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
    renameSync(this.tmp, this.path);
  }
}

/**
 * Builds the peers' files from the generator and the snapshot's ranks, streaming: only the
 * numeric columns and a sample of folded values (for the needles) stay in memory.
 */
export async function buildPeerFiles(dataset: Dataset, log: (line: string) => void): Promise<void> {
  log(`building peer files ${dataset.peerDir}`);
  rmSync(dataset.peerDir, { recursive: true, force: true });
  mkdirSync(dataset.peerDir, { recursive: true });
  const n = dataset.rows;
  const dir = dataset.peerDir;
  const { store } = loadSnapshot(dataset.snapshot);
  const nameRanks = storedColumn(store, "name").rankByRow as Uint32Array;
  const emailRanks = storedColumn(store, "email").rankByRow as Uint32Array;
  // a number key's distinct values are its values in row order
  const storedIds = keyColumn(store).distinct as Float64Array;
  const ids = new Float64Array(n);
  const statusCodes = new Uint8Array(n);
  const texts = {
    name: new ChunkedFile(join(dir, "name.txt")),
    email: new ChunkedFile(join(dir, "email.txt")),
    nameFolded: new ChunkedFile(join(dir, "name_folded.txt")),
    emailFolded: new ChunkedFile(join(dir, "email_folded.txt")),
  };
  const csv = new ChunkedFile(dataset.csv);
  csv.write("id,name,email,status,name_folded,email_folded,name_rank,email_rank\n");
  const sampleStep = Math.max(1, Math.floor(n / NEEDLE_SAMPLE_ROWS));
  const sampledNames: string[] = [];
  const sampledEmails: string[] = [];
  let i = 0;
  for (const user of generateUsers({ count: n, seed: SEED })) {
    if (user.id !== storedIds[i]) throw new Error(`row ${i}: the generator gives id ${user.id}, the snapshot ${storedIds[i]}`);
    if (user.name.includes("\n") || user.email.includes("\n")) throw new Error(`row ${i} holds a line break; the line format cannot carry it`);
    const nameFolded = fold(user.name);
    const emailFolded = fold(user.email);
    ids[i] = user.id;
    statusCodes[i] = STATUS_VALUES.indexOf(user.status);
    const sep = i === 0 ? "" : "\n";
    texts.name.write(sep + user.name);
    texts.email.write(sep + user.email);
    texts.nameFolded.write(sep + nameFolded);
    texts.emailFolded.write(sep + emailFolded);
    csv.write(
      `${user.id},${csvField(user.name)},${csvField(user.email)},${user.status},${csvField(nameFolded)},${csvField(emailFolded)},${nameRanks[i]},${emailRanks[i]}\n`,
    );
    if (i % sampleStep === 0) {
      sampledNames.push(nameFolded);
      sampledEmails.push(emailFolded);
    }
    i++;
    // The garbage of a million rows' strings, collected now rather than left to pile up (GiBs at 10M).
    if (i % 1_000_000 === 0) Bun.gc(true);
  }
  if (i !== n) throw new Error(`the generator gave ${i} rows, expected ${n}`);
  for (const file of Object.values(texts)) file.close();
  csv.close();
  writeAtomic(join(dir, "ids.f64"), new Uint8Array(ids.buffer));
  writeAtomic(join(dir, "status.u8"), statusCodes);
  writeAtomic(join(dir, "name_rank.u32"), new Uint8Array(nameRanks.buffer, nameRanks.byteOffset, nameRanks.byteLength));
  writeAtomic(join(dir, "email_rank.u32"), new Uint8Array(emailRanks.buffer, emailRanks.byteOffset, emailRanks.byteLength));

  const needles: Needles = {
    email: frequentNeedles(sampledEmails, ASCII_LETTERS, true),
    name: frequentNeedles(sampledNames, LETTERS, false),
  };
  writeAtomic(join(dir, "needles.json"), JSON.stringify(needles));
  // partition code 0 is null (none in the generated data), code c the (c-1)-th status value
  const stats: DatasetStats = { rows: n, statusCounts: Array.from((store.partition as Partition).counts.subarray(1)) };
  writeAtomic(join(dir, "stats.json"), JSON.stringify(stats));
  writeAtomic(join(dir, "done"), new Date().toISOString());
  log(`built peer files: ${needles.email.length} e-mail and ${needles.name.length} name needles`);
}

/** Reads `n` lines of a text column. */
async function readLines(path: string, n: number): Promise<string[]> {
  const values = n === 0 ? [] : (await Bun.file(path).text()).split("\n");
  if (values.length !== n) throw new Error(`${path}: ${values.length} lines, expected ${n}`);
  return values;
}

/** Reads the peers' columns back (the same for every peer, timed as its "read" step). */
export async function readPeerColumns(dataset: Dataset, options: { folded?: boolean; ranks?: boolean } = {}): Promise<PeerColumns> {
  const dir = dataset.peerDir;
  const n = dataset.rows;
  const folded = options.folded !== false;
  const ranks = options.ranks !== false;
  return {
    rows: n,
    ids: new Float64Array(await Bun.file(join(dir, "ids.f64")).arrayBuffer()),
    statusCodes: new Uint8Array(await Bun.file(join(dir, "status.u8")).arrayBuffer()),
    names: await readLines(join(dir, "name.txt"), n),
    emails: await readLines(join(dir, "email.txt"), n),
    namesFolded: folded ? await readLines(join(dir, "name_folded.txt"), n) : [],
    emailsFolded: folded ? await readLines(join(dir, "email_folded.txt"), n) : [],
    nameRanks: ranks ? new Uint32Array(await Bun.file(join(dir, "name_rank.u32")).arrayBuffer()) : new Uint32Array(0),
    emailRanks: ranks ? new Uint32Array(await Bun.file(join(dir, "email_rank.u32")).arrayBuffer()) : new Uint32Array(0),
  };
}

/** True when the snapshot and its build report are there and the snapshot loads. */
function snapshotReady(dataset: Dataset, log: (line: string) => void): boolean {
  if (!existsSync(dataset.snapshot) || !existsSync(dataset.buildReport)) return false;
  try {
    loadSnapshot(dataset.snapshot, { verify: false });
    return true;
  } catch (error) {
    log(`cached snapshot refused (${(error as Error).message}); rebuilding`);
    return false;
  }
}

/**
 * Builds whatever of the dataset is missing: the snapshot, then the peer files, each in a child
 * process of its own (`--step`), so the snapshot build's memory is gone before the next step.
 */
export function buildDataset(dataset: Dataset, log: (line: string) => void): void {
  mkdirSync(join(dataset.snapshot, ".."), { recursive: true });
  const step = (name: "snapshot" | "peers") => {
    const child = Bun.spawnSync([process.execPath, join(ROOT, "bench", "datasets.ts"), "--step", name, String(dataset.rows)], {
      cwd: ROOT,
      stdout: "inherit",
      stderr: "inherit",
    });
    if (child.exitCode !== 0) throw new Error(`building the ${sizeLabel(dataset.rows)} ${name} failed (exit ${child.exitCode})`);
  };
  if (!snapshotReady(dataset, log)) {
    rmSync(dataset.peerDir, { recursive: true, force: true });
    step("snapshot");
  }
  if (!existsSync(join(dataset.peerDir, "done"))) step("peers");
}

/** True when the cached snapshot was built from other store/snapshot/collation sources than now. */
export function snapshotStale(dataset: Dataset): boolean {
  return readBuildReport(dataset).sources !== snapshotSourcesHash();
}

/**
 * Makes sure the dataset of `rows` rows is cached, building it in a child process (so the
 * build's memory is returned before any timing). A stale snapshot (see {@link snapshotStale}) is
 * rebuilt up to {@link AUTO_REBUILD_ROWS} rows or with `rebuild`; otherwise it is kept and
 * `stale` says so. `rebuild` always forces a fresh snapshot build.
 */
export function ensureDataset(rows: number, options: { rebuild?: boolean; log: (line: string) => void }): { dataset: Dataset; stale: boolean } {
  const dataset = datasetPaths(rows);
  let rebuild = options.rebuild === true;
  if (!rebuild && datasetReady(dataset) && snapshotStale(dataset)) {
    if (rows <= AUTO_REBUILD_ROWS) {
      options.log(`${sizeLabel(rows)}: the snapshot was built from older store/snapshot/collation sources; rebuilding`);
      rebuild = true;
    } else if (!snapshotReady(dataset, options.log)) {
      // refused by this build (another format version): only the snapshot is rebuilt
      rmSync(dataset.snapshot, { force: true });
      rmSync(dataset.buildReport, { force: true });
    } else {
      options.log(`${sizeLabel(rows)}: the snapshot was built from older store/snapshot/collation sources; kept (use --rebuild to refresh)`);
      return { dataset, stale: true };
    }
  }
  if (rebuild) {
    rmSync(dataset.snapshot, { force: true });
    rmSync(dataset.buildReport, { force: true });
    rmSync(dataset.peerDir, { recursive: true, force: true });
  }
  if (!datasetReady(dataset)) buildDataset(dataset, options.log);
  if (!datasetReady(dataset)) throw new Error(`building the ${sizeLabel(rows)} dataset failed`);
  return { dataset, stale: false };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ options: { step: { type: "string" } }, allowPositionals: true });
  const sizes = positionals.map(parseSize);
  if (sizes.length === 0) {
    process.stderr.write("usage: bun bench/datasets.ts <size>... (e.g. 10k 100k 1m 10m)\n");
    process.exit(2);
  }
  const log = (line: string) => process.stderr.write(`[datasets] ${line}\n`);
  for (const rows of sizes) {
    const dataset = datasetPaths(rows);
    if (values.step === "snapshot") await buildSnapshot(dataset, log);
    else if (values.step === "peers") await buildPeerFiles(dataset, log);
    else {
      buildDataset(dataset, log);
      log(`${sizeLabel(rows)}: ${dataset.snapshot} and ${dataset.peerDir}`);
    }
  }
}
