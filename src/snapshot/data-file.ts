/**
 * Serving a data file in one step (`serve FILE`, docs/api.md "Any users table: from your data to columns"): the file is built
 * into a snapshot in the cache directory by the rules of `snapshot build` (`--schema`, `--key`,
 * `--exclude`, `--allow-empty`, `--delimiter`), under a name made of the input's content hash and
 * the build options, and that snapshot is reused while both are unchanged (a restart loads it at
 * once). `current.snap` in the cache directory points at the version being served.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { FORMAT_VERSION, MAGIC } from "./format.ts";
import { SnapshotError, loadSnapshot } from "./load.ts";
import { type BuildReport, type FileBuildOptions, buildSnapshotFromFile } from "./build-file.ts";

/** The build options that decide a data file's snapshot. */
export interface DataFileOptions {
  schemaFile?: string;
  key?: string;
  exclude?: readonly string[];
  allowEmpty?: boolean;
  delimiter?: string;
}

/** Bytes hashed at a time. */
const HASH_CHUNK = 8 << 20;

/**
 * The name of a data file's snapshot: SHA-256 of the file's content, of the options (the schema
 * file's content included) and of the snapshot format, 16 hex digits.
 * @throws the file system's errors (a missing file, a directory)
 */
export async function dataSnapshotName(file: string, options: DataFileOptions): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  const input = Bun.file(file);
  const size = input.size;
  for (let at = 0; at < size; at += HASH_CHUNK) hasher.update(new Uint8Array(await input.slice(at, Math.min(size, at + HASH_CHUNK)).arrayBuffer()));
  const schema = options.schemaFile === undefined ? null : readFileSync(options.schemaFile, "utf8");
  hasher.update(JSON.stringify({ format: FORMAT_VERSION, name: basename(file), schema, key: options.key ?? null, exclude: [...(options.exclude ?? [])].sort(), allowEmpty: options.allowEmpty === true, delimiter: options.delimiter ?? null }));
  return `data-${hasher.digest("hex").slice(0, 16)}.snap`;
}

/** The file that names the version being served in a cache directory. */
export const CURRENT_DATA = "current.snap";

/** What {@link ensureDataSnapshot} did. */
export interface DataSnapshot {
  /** The snapshot to serve: `<cacheDir>/current.snap`, a link to the built file. */
  path: string;
  /** The built file's name. */
  name: string;
  /** The build's report, or null when a cached build was reused. */
  built: BuildReport | null;
}

/**
 * The snapshot of a data file in `cacheDir`: reused when a build of the same content and options
 * is there and loads, built otherwise (written to a temporary file and renamed); then
 * `current.snap` is pointed at it and the other builds are removed.
 * @param build builds the file (default: in this process; `serve --watch` builds in a child
 *   process, so that requests go on meanwhile)
 * @throws the build's errors (InputError, IngestError with `file:line: reason`, SchemaError);
 *   nothing in the cache changes then
 */
export async function ensureDataSnapshot(
  file: string,
  options: DataFileOptions,
  cacheDir: string,
  build: (input: string, output: string, options: FileBuildOptions) => Promise<BuildReport | null> = (input, output, o) => buildSnapshotFromFile(input, output, undefined, o),
): Promise<DataSnapshot> {
  mkdirSync(cacheDir, { recursive: true });
  const name = await dataSnapshotName(file, options);
  const target = join(cacheDir, name);
  let built: BuildReport | null = null;
  let reuse = false;
  if (existsSync(target)) {
    try {
      loadSnapshot(target, { verify: false });
      reuse = true;
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error;
    }
  }
  if (!reuse) built = await build(file, target, { schemaFile: options.schemaFile, key: options.key, exclude: options.exclude, allowEmpty: options.allowEmpty, delimiter: options.delimiter });
  // current.snap → the build, replaced in one step
  const link = join(cacheDir, CURRENT_DATA);
  const temporary = `${link}.${process.pid}.link`;
  rmSync(temporary, { force: true });
  symlinkSync(name, temporary);
  renameSync(temporary, link);
  for (const other of readdirSync(cacheDir)) if (/^data-[0-9a-f]{16}\.snap$/.test(other) && other !== name) rmSync(join(cacheDir, other), { force: true });
  return { path: link, name, built };
}

/**
 * True when `path` is an existing non-empty regular file that does not start with the snapshot's
 * magic (snapshot/format.ts): what `serve --snapshot` refuses with a pointer to `serve FILE`.
 */
export function isDataFile(path: string): boolean {
  let fd = -1;
  try {
    if (!statSync(path).isFile()) return false;
    fd = openSync(path, "r");
    const head = new Uint8Array(MAGIC.length);
    const read = readSync(fd, head, 0, head.length, 0);
    if (read === 0) return false;
    return read < MAGIC.length || head.some((b, i) => b !== MAGIC[i]);
  } catch {
    return false;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}
