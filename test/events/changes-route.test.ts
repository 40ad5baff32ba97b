/**
 * GET /api/users/changes over a real socket (docs/api.md "GET /api/users/changes"): a replica
 * (`serve --source` on a directory of published snapshots and batches) with an access policy
 * of two roles — `admin` (every row and column) and `actives` (the active rows; id, name and
 * status) — and event streams read as a browser's EventSource reads them. Each expectation is
 * worked out from the batch itself: which keys it touches, and which of them the role sees
 * before or after it with a column it sees changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BatchEntry, batchKey, sha256Hex } from "../../src/live/batches.ts";
import { type Change, encodeBatch } from "../../src/live/changes.ts";
import { publishBatch, publishSnapshot } from "../../src/publish/publish.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { type EventStreamClient, openEventStream } from "../support/event-stream.ts";
import { pollUntil } from "../support/poll.ts";
import { type ServeProcess, spawnServe } from "../support/serve-process.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";
import { ACTIVES_KEY, ADMIN_KEY, writeActivesPolicy } from "../support/actives-policy.ts";

type Row = { id: number; name: string; email: string; status: "active" | "inactive" };


let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "users-events-"));
  writeActivesPolicy(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The first table: ids 1–40, odd ids active. */
const firstRows = (): Row[] => Array.from({ length: 40 }, (_, i) => ({ id: i + 1, name: `n${i + 1}`, email: `e${i + 1}@x`, status: (i + 1) % 2 === 1 ? "active" : "inactive" }));

/** A published location with its own LSN counter: snapshots and batches, as the publisher writes them. */
function location(name: string) {
  const at = join(dir, name);
  let lsn = 0x100;
  let rows = firstRows();
  const next = () => {
    lsn += 0x100;
    return `0/${lsn.toString(16).toUpperCase()}`;
  };
  return {
    at,
    rows: () => rows,
    /** Publishes `rows` as a snapshot at the position reached (a compaction) or at a new one. */
    async snapshot(table: Row[], advance: boolean): Promise<string> {
      rows = table;
      const path = join(dir, `${name}-${lsn}-${advance}.snap`);
      writeSnapshot(path, buildStoreFromRecords(table));
      const position = advance ? next() : `0/${lsn.toString(16).toUpperCase()}`;
      return (await publishSnapshot(path, at, new Date(), {}, position)).current.snapshotId;
    },
    /** Publishes one batch of `changes` and applies it to the rows kept here. */
    async batch(changes: Change[]): Promise<string> {
      const firstLsn = next();
      const last = next();
      const bytes = encodeBatch({ lsn: last, commitTime: Date.now(), changes });
      const entry: BatchEntry = { key: batchKey(firstLsn, last), firstLsn, lsn: last, commitTime: new Date().toISOString(), changes: changes.length, bytes: bytes.length, sha256: sha256Hex(bytes) };
      await publishBatch(at, entry, bytes);
      for (const change of changes) {
        const key = change.op === "upsert" ? change.record.id : change.key;
        rows = rows.filter((r) => r.id !== key);
        if (change.op === "upsert") rows = [...rows, change.record as Row].sort((a, b) => a.id - b.id);
      }
      return last;
    },
  };
}

/**
 * The keys a role is told of for `changes` applied to `before` (the oracle): a key whose record
 * cut to the role's columns, among the role's rows, differs before and after.
 */
function expectedKeys(before: Row[], changes: Change[], role: "admin" | "actives"): number[] {
  const cut = (row: Row | undefined) => {
    if (row === undefined) return null;
    if (role === "admin") return JSON.stringify(row);
    return row.status === "active" ? JSON.stringify({ id: row.id, name: row.name, status: row.status }) : null;
  };
  let after = before;
  const keys: number[] = [];
  for (const change of changes) {
    const key = (change.op === "upsert" ? change.record.id : change.key) as number;
    if (!keys.includes(key)) keys.push(key);
    after = after.filter((r) => r.id !== key);
    if (change.op === "upsert") after = [...after, change.record as Row];
  }
  return keys.filter((key) => cut(before.find((r) => r.id === key)) !== cut(after.find((r) => r.id === key)));
}

/** A replica started on `source` and serving its first snapshot (the placeholder before it answers 503). */
async function replica(at: string, args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const server = await spawnServe(null, ["--source", at, "--poll", "0.1", ...args], env);
  await server.waitForLine((l) => l.msg === "HTTP envelope", { what: "the first snapshot serving" });
  return server;
}

const stream = (server: ServeProcess, key: string | null, extra: Record<string, string> = {}, query = "") =>
  openEventStream(`${server.url}/api/users/changes${query}`, { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...extra });

/** The change events of a stream after its first `from` events. */
const changesOf = (client: EventStreamClient, from = 0) => client.events.slice(from).filter((e) => e.event === "change");

describe("GET /api/users/changes", () => {
  test("per batch: each role is told the keys of its own rows that changed, nothing of the rest; ids resume", async () => {
    const source = location("roles");
    await source.snapshot(firstRows(), true);
    const server = await replica(source.at, ["--access", join(dir, "policy.json"), "--cache-dir", join(dir, "roles-cache")], { EVENT_KEEPALIVE_MS: "50" });
    const admin = await stream(server, ADMIN_KEY);
    const actives = await stream(server, null, {}, `?access_token=${ACTIVES_KEY}`);
    try {
      expect({ status: admin.status, body: admin.comments[0] ?? "" }).toEqual({ status: 200, body: "" });
      expect(admin.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(actives.status).toBe(200);
      const first = await admin.event(0);
      expect(first.event).toBe("version");
      expect((await actives.event(0)).event).toBe("version");
      // a keep-alive comment arrives on an idle stream
      await actives.until(() => actives.comments.includes("keep-alive"), "a keep-alive comment");

      const steps: Change[][] = [
        // an active row renamed: both
        [{ op: "upsert", record: { id: 1, name: "one", email: "e1@x", status: "active" } }],
        // an inactive row renamed: admin only
        [{ op: "upsert", record: { id: 2, name: "two", email: "e2@x", status: "inactive" } }],
        // an active row's hidden column: admin only
        [{ op: "upsert", record: { id: 3, name: "n3", email: "changed@x", status: "active" } }],
        // an active row turned inactive (it leaves the role's rows) and an insert of an active one
        [
          { op: "upsert", record: { id: 5, name: "n5", email: "e5@x", status: "inactive" } },
          { op: "upsert", record: { id: 41, name: "new", email: "e41@x", status: "active" } },
        ],
        // a delete of an inactive row, then of an active one
        [{ op: "delete", key: 4 }],
        [{ op: "delete", key: 7 }],
      ];
      const told = { admin: [] as number[][], actives: [] as number[][] };
      for (const changes of steps) {
        const before = source.rows();
        const lsn = await source.batch(changes);
        const expected = { admin: expectedKeys(before, changes, "admin"), actives: expectedKeys(before, changes, "actives") };
        for (const role of ["admin", "actives"] as const) if (expected[role].length > 0) told[role].push(expected[role]);
        await admin.until(() => changesOf(admin).length === told.admin.length, `admin told of ${lsn}`);
      }
      // the last batch touched an active row: once the actives stream has it, it has every event it will get
      await actives.until(() => changesOf(actives).length === told.actives.length, "actives told of the last batch");
      expect(changesOf(admin).map((e) => (e.data as { keys: number[] }).keys)).toEqual(told.admin);
      expect(changesOf(actives).map((e) => (e.data as { keys: number[] }).keys)).toEqual(told.actives);
      expect(told.actives).toEqual([[1], [5, 41], [7]]);
      for (const e of [...admin.events, ...actives.events]) {
        expect(e.id).toBe((e.data as { version: string }).version);
        if (e.event === "change") expect((e.data as { more: boolean }).more).toBe(false);
      }

      // resumption: from the admin's second change event, the rest again; from an unknown id, one refresh
      const adminChanges = changesOf(admin);
      const resumed = await stream(server, ADMIN_KEY, { "last-event-id": adminChanges[1].id as string });
      await resumed.until(() => resumed.events.length >= 1 + adminChanges.length - 2, "the missed events");
      expect(resumed.events.slice(1).map((e) => e.data)).toEqual(adminChanges.slice(2).map((e) => e.data));
      resumed.close();
      const lost = await stream(server, ADMIN_KEY, { "last-event-id": "no-such-version" });
      await lost.until(() => lost.events.length >= 2, "a refresh");
      expect(lost.events[1].event).toBe("change");
      expect(lost.events[1].data).toEqual({ version: lost.events[0].id, keys: null, more: true });
      lost.close();
      // the actives role resumed from its version on connect: the three events it was told
      const again = await stream(server, ACTIVES_KEY, { "last-event-id": actives.events[0].id as string });
      await again.until(() => again.events.length >= 4, "the actives' missed events");
      expect(again.events.slice(1).map((e) => (e.data as { keys: number[] }).keys)).toEqual(told.actives);
      again.close();

      // without a credential: 401; the token is never logged
      const none = await stream(server, null);
      expect(none.status).toBe(401);
      expect(JSON.stringify(server.logs())).not.toContain(ACTIVES_KEY);

      // a compaction (the snapshot at the position reached) tells nobody; a snapshot further on tells everyone to refresh
      const reloads = server.logs().filter((l) => l.msg === "snapshot reloaded").length;
      const compacted = await source.snapshot(source.rows(), false);
      await server.waitForLine((l) => l.msg === "snapshot reloaded" && l.snapshotId === compacted, { after: reloads, what: "the compaction swapped in" });
      const counts = { admin: changesOf(admin).length, actives: changesOf(actives).length };
      const moved = source.rows().map((r) => (r.id === 9 ? { ...r, name: "nine" } : r));
      const further = await source.snapshot(moved, true);
      await server.waitForLine((l) => l.msg === "snapshot reloaded" && l.snapshotId === further, { what: "the new snapshot swapped in" });
      await admin.until(() => changesOf(admin).length > counts.admin, "admin told of the swap");
      await actives.until(() => changesOf(actives).length > counts.actives, "actives told of the swap");
      expect(changesOf(admin, 0).slice(counts.admin).map((e) => e.data)).toEqual([{ version: `${further}`, keys: null, more: true }]);
      expect(changesOf(actives).slice(counts.actives).map((e) => (e.data as { keys: null }).keys)).toEqual([null]);

      // SIGTERM ends every stream cleanly and the process exits 0
      server.child.kill("SIGTERM");
      await admin.until(() => admin.ended(), "the stream's end");
      await actives.until(() => actives.ended(), "the stream's end");
      expect(admin.end()).toBe("done");
      expect(await server.child.exited).toBe(0);
    } finally {
      admin.close();
      actives.close();
      await server.dispose();
    }
  }, 60_000);

  test("serve --workers 2 with --source: a stream on any worker is told of each batch; SIGTERM ends the streams of every worker", async () => {
    const source = location("workers");
    await source.snapshot(firstRows(), true);
    const server = await spawnServe(null, ["--workers", "2", "--source", source.at, "--poll", "0.1", "--cache-dir", join(dir, "workers-cache")]);
    const streams: EventStreamClient[] = [];
    try {
      await server.waitForLine(() => server.logs().filter((l) => l.msg === "HTTP envelope").length >= 2, { what: "two workers serving" });
      // new connections spread over the workers (SO_REUSEPORT): enough of them that both have some
      for (let i = 0; i < 8; i++) streams.push(await stream(server, null, { connection: "close" }));
      for (const client of streams) expect((await client.event(0)).event).toBe("version");
      const changes: Change[] = [{ op: "upsert", record: { id: 10, name: "ten", email: "e10@x", status: "inactive" } }];
      const version = `${(streams[0].events[0].data as { version: string }).version}@${await source.batch(changes)}`;
      for (const client of streams) await client.until(() => changesOf(client).length === 1, "the batch's event");
      for (const client of streams) expect(changesOf(client)[0].data).toEqual({ version, keys: [10], more: false });
      server.child.kill("SIGTERM");
      for (const client of streams) await client.until(() => client.ended(), "the stream's end");
      expect(await server.child.exited).toBe(0);
    } finally {
      for (const client of streams) client.close();
      await server.dispose();
    }
  }, 60_000);

  test("--max-event-streams: one more stream is a 503 problem with Retry-After; a closed one frees its place", async () => {
    const source = location("limit");
    await source.snapshot(firstRows(), true);
    const server = await replica(source.at, ["--max-event-streams", "2", "--cache-dir", join(dir, "limit-cache")]);
    try {
      const a = await stream(server, null);
      const b = await stream(server, null);
      await a.event(0);
      await b.event(0);
      const c = await stream(server, null);
      expect(c.status).toBe(503);
      expect(c.headers.get("retry-after")).toBe("1");
      expect(c.headers.get("content-type")).toBe("application/problem+json");
      expect(JSON.parse(c.comments[0])).toMatchObject({ status: 503, title: "Too many event streams" });
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(/users_listing_event_streams_open 2/);
      a.close();
      // the server sees the close when it next writes or reads, and logs nothing of it: ask until
      // the place is free
      await pollUntil(async () => {
        const d = await stream(server, null);
        if (d.status !== 200) return false;
        d.close();
        return true;
      });
      b.close();
    } finally {
      await server.dispose();
    }
  }, 60_000);
});
