import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { ensureGeneratedSnapshot } from "../src/cli.ts";
import { FORMAT_VERSION } from "../src/snapshot/format.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";

const logger = pino({ level: "silent" });
const SPEC = { count: 500, seed: 7 };
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "cli-test-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the default data's snapshot", () => {
  test("is built when absent, kept when it loads", () => {
    const path = join(dir, "absent.snap");
    ensureGeneratedSnapshot(path, SPEC, logger);
    const first = loadSnapshot(path);
    expect(first.store.rowCount).toBe(500);
    const built = statSync(path).mtimeMs;
    ensureGeneratedSnapshot(path, SPEC, logger);
    expect(statSync(path).mtimeMs).toBe(built);
    expect(loadSnapshot(path).store.snapshotId).toBe(first.store.snapshotId);
  });

  test("is rebuilt when refused: an older format version, or not a snapshot", () => {
    const old = join(dir, "old.snap");
    copyFileSync(join(import.meta.dir, "fixtures/golden-v2.snap"), old);
    expect(() => loadSnapshot(old)).toThrow(/format version 2 is not supported/);
    ensureGeneratedSnapshot(old, SPEC, logger);
    const loaded = loadSnapshot(old);
    expect(loaded.header.formatVersion).toBe(FORMAT_VERSION);
    expect(loaded.store.rowCount).toBe(500);

    const junk = join(dir, "junk.snap");
    writeFileSync(junk, "not a snapshot");
    ensureGeneratedSnapshot(junk, SPEC, logger);
    expect(loadSnapshot(junk).store.rowCount).toBe(500);
    expect(existsSync(junk)).toBe(true);
  });
});
