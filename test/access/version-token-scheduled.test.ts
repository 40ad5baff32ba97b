/**
 * A large restricted scope's first version token (engine/view-version.ts; docs/api.md "Access control") is computed in the query scheduler a piece at a time (service/pipeline.ts), so the
 * requests of other roles are answered meanwhile: the scheduler here runs one piece per
 * event-loop turn, and between turns a cheap role's request is answered at once. Nothing waits
 * on time: the test turns the event loop and watches the first request's promise settle.
 * The token so computed is the one computed from scratch, its tag the one later requests carry
 * (and a 304 for it), and requests of the same view meanwhile share one computation.
 *
 * Across a compaction (a snapshot of the same rows swapped in), the tokens are carried, not
 * computed again: each equals the token from scratch on the compacted snapshot, with batches
 * past it or not, for scopes asked at the last version and at earlier ones.
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import type { Grant } from "../../src/access/control.ts";
import { parsePolicy } from "../../src/access/policy.ts";
import { compileView } from "../../src/access/view.ts";
import { type Engine, applyChanges, createEngine } from "../../src/engine/execute.ts";
import { DEFER_ABOVE } from "../../src/engine/planner.ts";
import { QueryScheduler } from "../../src/engine/scheduler.ts";
import { HASH_PIECE, type VersionScope, carryVersions, viewVersion, viewVersionCost, viewVersionFromScratch } from "../../src/engine/view-version.ts";
import { generateUsers } from "../../src/generate/users.ts";
import type { DeltaVersion } from "../../src/live/delta.ts";
import { lsnText } from "../../src/live/changes.ts";
import { compactTable } from "../../src/live/compact.ts";
import { buildStore } from "../../src/store/build.ts";
import { createQueryService } from "../../src/service/pipeline.ts";
import { rowsGet } from "../../src/service/routes.ts";
import { SEED_SPECS, buildStoreFromRecords, buildTableStore, buildWideStore } from "../support/table-store.ts";

/** Rows of the table: many pieces of the first token's pass. */
const ROWS = 40_000;
// `status` an enum inferred from the data: the role's schema (its values of the role's rows) is kept per token too
const store = buildTableStore(Array.from(generateUsers({ count: ROWS, seed: 11 })), { specs: SEED_SPECS.map((spec) => (spec.id === "status" ? { ...spec, inferred: true } : spec)), key: "id" });
const engine = createEngine(store);

/** Two roles: every row without `email` (a large scope), and the first 50 ids, every column (a small one). */
const policy = parsePolicy(
  JSON.stringify({
    jwt: { secret: "s".repeat(40) },
    roles: {
      wide: { columns: ["id", "name", "status"] },
      narrow: { columns: "*", filterModel: { id: { filterType: "number", type: "lessThanOrEqual", filter: 50 } } },
    },
  }),
  "policy.json",
  store.schema,
  { dir: "." },
);

/** The grant of role `name` (no claims). */
function grantOf(name: string): Grant {
  const role = policy.roles.get(name);
  if (role === undefined) throw new Error(`no role ${name}`);
  const view = compileView(role, {}, store.schema, policy.id);
  if ("reason" in view) throw new Error(`no view: ${view.detail}`);
  return { principal: { role, claims: {} }, view };
}

const request = (headers: Record<string, string> = {}) => new Request("http://localhost/api/users?pageSize=5", { headers });

/** One event-loop turn (the scheduler runs its slice in one). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("a large scope's first token is computed in slices", () => {
  test("another role's requests are answered while it is computed; the token is the one from scratch", async () => {
    // one piece per turn: a slice shorter than any piece
    const scheduler = new QueryScheduler({ sliceMs: 1e-9 });
    const service = createQueryService({ engine: () => engine, maxPageSize: 1000, logger: pino({ level: "silent" }), scheduler, access: null });
    const wide = grantOf("wide");
    const narrow = grantOf("narrow");
    expect(store.schema.columns.find((c) => c.id === "status")?.inferred).toBe(true);
    expect(viewVersionCost(engine, wide.view)).toBeGreaterThan(DEFER_ABOVE);
    expect(viewVersionCost(engine, narrow.view)).toBeLessThanOrEqual(DEFER_ABOVE);

    const first = service.handle(rowsGet, request(), wide);
    expect(first).toBeInstanceOf(Promise);
    // a second request of the same view meanwhile waits on the same computation
    const second = service.handle(rowsGet, request(), wide);
    expect(second).toBeInstanceOf(Promise);
    let settled = false;
    const both = Promise.all([first, second]).finally(() => {
      settled = true;
    });
    let answered = 0;
    while (!settled) {
      // the cheap role is answered at once, without waiting for the wide one's token
      const cheap = service.handle(rowsGet, request(), narrow);
      expect(cheap).toBeInstanceOf(Response);
      expect((cheap as Response).status).toBe(200);
      if (!settled) answered++;
      await turn();
    }
    const [a, b] = await both;
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    // a turn per piece: the cheap role was answered between the pieces of the pass
    expect(answered).toBeGreaterThanOrEqual(Math.floor(ROWS / HASH_PIECE) - 1);
    // one computation for both requests
    expect(scheduler.stats.completed).toBe(1);

    // the token is the one computed from scratch, kept: the next request is answered at once with the same tag, and a 304 for it
    expect(viewVersion(engine, wide.view)).toBe(viewVersionFromScratch(engine, wide.view));
    expect(viewVersionCost(engine, wide.view)).toBe(0);
    const etag = a.headers.get("etag") as string;
    expect(b.headers.get("etag")).toBe(etag);
    const again = service.handle(rowsGet, request(), wide);
    expect(again).toBeInstanceOf(Response);
    expect((again as Response).headers.get("etag")).toBe(etag);
    expect(await (again as Response).text()).toBe(await a.text());
    const unchanged = service.handle(rowsGet, request({ "if-none-match": etag }), wide);
    expect((unchanged as Response).status).toBe(304);
  });
});

/** A batch at LSN `n`: ids `from..from+count` upserted with a new name, and `deleted` dropped. */
function batch(engine: Engine, n: number, from: number, count: number, deleted: number[]): Engine {
  const upserts = Array.from({ length: count }, (_, i) => ({ op: "upsert" as const, record: { id: from + i, name: `Renamed ${n} ${i}`, email: `r${n}.${i}@example.com`, status: "active" } }));
  const deletes = deleted.map((key) => ({ op: "delete" as const, key }));
  return applyChanges(engine, { lsn: lsnText(0x100 * n), commitTime: 0, changes: [...upserts, ...deletes] });
}

describe("a compaction carries the tokens", () => {
  test("each carried token is the compacted snapshot's token from scratch; nothing is hashed again", () => {
    const base = buildStoreFromRecords(Array.from(generateUsers({ count: 2000, seed: 3 })));
    const scopes: VersionScope[] = [grantOf("wide").view, grantOf("narrow").view].map((v) => ({ filter: v.filter, projection: v.projection, unrestricted: false }));
    // the second scope is asked at the first batch only: its anchor is behind when the swap comes
    let live = batch(createEngine(base), 1, 10, 30, [1, 2, 3]);
    for (const scope of scopes) viewVersion(live, scope);
    live = batch(live, 2, 40, 20, [5, 45]);
    const asked = { ...scopes[0] };
    viewVersion(live, asked);
    const tokens = scopes.map((scope) => viewVersionFromScratch(live, scope));

    // the compacted snapshot alone
    const compacted = createEngine(buildStore(compactTable(live.live as DeltaVersion)));
    expect(carryVersions(live, compacted)).toBe(2);
    for (const [i, scope] of scopes.entries()) {
      const fresh = { ...scope };
      // a look-up: no row to hash
      expect(viewVersionCost(compacted, fresh)).toBe(0);
      expect(viewVersion(compacted, fresh)).toBe(tokens[i]);
      expect(viewVersionFromScratch(compacted, fresh)).toBe(tokens[i]);
    }

    // the compacted snapshot with a batch past it (a replica swapped to it at the same position), then one more batch
    const replayed = batch(createEngine(buildStore(compactTable(live.live as DeltaVersion))), 3, 0, 0, []);
    const reached = batch(live, 3, 0, 0, []);
    viewVersion(reached, asked);
    expect(carryVersions(reached, replayed)).toBe(2);
    const further = batch(replayed, 4, 100, 10, [7]);
    for (const [i, scope] of scopes.entries()) {
      const fresh = { ...scope };
      expect(viewVersionCost(replayed, fresh)).toBe(0);
      expect(viewVersion(replayed, fresh)).toBe(tokens[i]);
      expect(viewVersion(further, fresh)).toBe(viewVersionFromScratch(further, scope));
    }
  });

  test("over another schema, nothing is carried", () => {
    const base = buildStoreFromRecords(Array.from(generateUsers({ count: 200, seed: 4 })));
    const before = createEngine(base);
    viewVersion(before, { ...grantOf("wide").view });
    // the same rows with one more column
    const records = Array.from(generateUsers({ count: 200, seed: 4 })).map((r) => ({ ...r, score: r.id % 7 }));
    const other = buildWideStore(records, [{ id: "score", kind: "number" }]);
    expect(carryVersions(before, createEngine(other))).toBe(0);
  });
});
