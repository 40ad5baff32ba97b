/**
 * Change events in the live fleet (docs/api.md "GET /api/users/changes"; docs/api.md
 * "GET /api/users/changes"): listeners on each replica's event stream, an independent record of
 * every transaction PostgreSQL committed, and the check that each one was announced to each
 * listener. Used by scripts/fleet-live.ts.
 *
 * - {@link startListener}: one Server-Sent Events client of `GET /api/users/changes`, kept open
 *   across kills and restarts: when its stream ends or cannot be opened it connects again with
 *   `Last-Event-ID` (the id of the last event it read). It records every event in arrival order.
 * - {@link createOracle} / {@link Oracle.read}: a second logical replication slot on the same
 *   server, decoded by PostgreSQL's own `test_decoding` plugin (nothing of this service's code):
 *   each committed transaction's commit-record end LSN and the keys it inserted, updated, deleted
 *   (a key change: the old key and the new), and the tick it set, if any.
 * - {@link checkAnnounced}: for one listener, every transaction the oracle saw is announced —
 *   the first `change` event whose version is at or past the transaction's commit end either
 *   lists all its keys, or is `"keys": null` (refresh everything, which covers it).
 *
 * A version token without access control is the replica's version id (engine/execute.ts
 * `versionId`): `<snapshotId>@<LSN>` after a batch, the bare snapshot id at a snapshot's own
 * position (its LSN from the published manifest, recorded by {@link SnapshotLsns}).
 */
import type postgres from "postgres";
import { lsnValue } from "../src/live/changes.ts";

/** One event a listener read: when (Date.now() ms), its type, id and data. */
export interface HeardEvent {
  at: number;
  event: "version" | "change";
  id: string;
  version: string;
  /** A change's keys (as strings); null for "refresh everything" and for a version event. */
  keys: string[] | null;
}

/** A listener (see the module comment) and what it has heard. */
export interface Listener {
  label: string;
  events: HeardEvent[];
  /** Streams opened (the first and every reconnect). */
  connections: number;
  /** Reconnects with `Last-Event-ID`: how many were answered with held events only, how many with a `"keys": null` refresh. */
  resumedHeld: number;
  resumedRefresh: number;
  /** Streams that could not be opened (a replica down, nginx's 502), by status or error. */
  refused: number;
  /** Something malformed read (not the Server-Sent Events format, or data that is not JSON). */
  malformed: string[];
  stopping: boolean;
  /** While set, the listener does not connect again until it resolves ({@link pauseListener}). */
  gate: Promise<void> | null;
  /** Resolves once stopped. */
  done: Promise<void>;
}

/** Parses one Server-Sent Events block (lines up to a blank line) into its fields; null for a comment-only block. */
function parseBlock(block: string): { id: string | null; event: string | null; data: string | null } | null {
  let id: string | null = null;
  let event: string | null = null;
  let data: string | null = null;
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = value;
    else if (field === "event") event = value;
    else if (field === "data") data = data === null ? value : `${data}\n${value}`;
  }
  return id === null && event === null && data === null ? null : { id, event, data };
}

/**
 * Opens a listener of `${base}/api/users/changes` (see the module comment) until
 * `listener.stopping` is set and its current stream ends (the caller aborts it with
 * {@link stopListener}). Reconnects at once after a stream ends, every `retryMs` while it cannot
 * connect (a replica being restarted).
 */
export function startListener(label: string, base: string, retryMs = 10): Listener & { abort: () => void } {
  let controller = new AbortController();
  const listener = {
    label,
    events: [] as HeardEvent[],
    connections: 0,
    resumedHeld: 0,
    resumedRefresh: 0,
    refused: 0,
    malformed: [] as string[],
    stopping: false,
    gate: null as Promise<void> | null,
    done: Promise.resolve(),
    abort: () => controller.abort(),
  };
  const run = async () => {
    while (!listener.stopping) {
      if (listener.gate !== null) {
        await listener.gate;
        listener.gate = null;
        continue;
      }
      controller = new AbortController();
      const last = listener.events.at(-1)?.id ?? null;
      let response: Response;
      try {
        response = await fetch(`${base}/api/users/changes`, { signal: controller.signal, headers: last === null ? {} : { "last-event-id": last } });
      } catch {
        listener.refused++;
        await Bun.sleep(retryMs);
        continue;
      }
      if (response.status !== 200 || response.body === null) {
        listener.refused++;
        await response.arrayBuffer().catch(() => {});
        await Bun.sleep(retryMs);
        continue;
      }
      listener.connections++;
      // a reconnect: what came after the version event, up to the first live event, says how it resumed
      let resuming = last !== null;
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let text = "";
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
          let end = text.indexOf("\n\n");
          while (end >= 0) {
            const block = parseBlock(text.slice(0, end));
            text = text.slice(end + 2);
            end = text.indexOf("\n\n");
            if (block === null) continue;
            const at = Date.now();
            if ((block.event !== "version" && block.event !== "change") || block.id === null || block.data === null) {
              listener.malformed.push(JSON.stringify(block));
              continue;
            }
            let data: { version?: unknown; keys?: unknown };
            try {
              data = JSON.parse(block.data);
            } catch {
              listener.malformed.push(block.data);
              continue;
            }
            if (typeof data.version !== "string" || data.version !== block.id || (block.event === "change" && data.keys !== null && !Array.isArray(data.keys))) {
              listener.malformed.push(block.data);
              continue;
            }
            const keys = block.event === "change" && Array.isArray(data.keys) ? data.keys.map(String) : null;
            if (resuming && block.event === "change") {
              if (keys === null) listener.resumedRefresh++;
              else listener.resumedHeld++;
              resuming = false;
            }
            listener.events.push({ at, event: block.event, id: block.id, version: data.version, keys });
          }
        }
      } catch {
        // the replica went (killed), or the stream was aborted: connect again unless stopping
      }
    }
  };
  listener.done = run();
  return listener;
}

/**
 * Closes a listener's stream and connects it again (with `Last-Event-ID`) only once `until`
 * resolves: what it missed meanwhile must come on the reconnect.
 */
export function pauseListener(listener: Listener & { abort: () => void }, until: Promise<void>): void {
  listener.gate = until;
  listener.abort();
}

/** Stops a listener: no reconnect, its stream aborted; resolves once it has ended. */
export async function stopListener(listener: Listener & { abort: () => void }): Promise<void> {
  listener.stopping = true;
  listener.abort();
  await listener.done;
}

/** Snapshot id → its LSN (`X/Y`), as the published manifest named them. */
export type SnapshotLsns = Map<string, string>;

/**
 * The LSN a version token stands for (`<snapshotId>@<LSN>`, or a bare snapshot id looked up in
 * `snapshots`), or null when a bare id was never seen in the manifest.
 */
export function versionLsn(version: string, snapshots: SnapshotLsns): string | null {
  const at = version.lastIndexOf("@");
  if (at >= 0) return version.slice(at + 1);
  return snapshots.get(version) ?? null;
}

/** One committed transaction as PostgreSQL decoded it for the oracle slot. */
export interface CommittedTransaction {
  /** The end of its commit record (`X/Y`): the LSN a batch holding it as its last ends at. */
  end: string;
  /** Keys it inserted, updated or deleted (a key change: both), as strings. */
  keys: Set<string>;
  /** The tick row's new amount when it set it (scripts/fleet-live.ts's ticks), else null. */
  tick: number | null;
}

/** The oracle slot (see the module comment). */
export interface Oracle {
  /** Every transaction committed since the slot was made and not read before, in commit order (the slot advances past them). */
  read: () => Promise<CommittedTransaction[]>;
  /** Drops the slot (it holds WAL back while it exists). */
  drop: () => Promise<void>;
}

/** Transactions decoded per call of `pg_logical_slot_get_changes` (bounds one answer's size). */
const ORACLE_CHUNK = 20_000;

/**
 * Creates the oracle slot `name` (test_decoding) on the server `sql` talks to: it sees every
 * transaction that commits from now on. `key` is the table's key column, `tickKey` the tick
 * row's key and `tickColumn` the column a tick sets.
 * @throws when the slot cannot be made (wal_level not logical, no free replication slot)
 */
export async function createOracle(sql: postgres.Sql, name: string, key: string, tickKey: string, tickColumn: string): Promise<Oracle> {
  await sql`SELECT pg_create_logical_replication_slot(${name}, 'test_decoding')`;
  const keyValue = `${key}\\[[^\\]]+\\]:(-?\\d+)`;
  const changeLine = new RegExp(`^table [^:]+: (INSERT|UPDATE|DELETE): (?:old-key: ${keyValue} new-tuple: )?${keyValue}(.*)$`);
  const tickValue = new RegExp(` ${tickColumn}\\[[^\\]]+\\]:(-?\\d+)`);
  return {
    async read() {
      const out: CommittedTransaction[] = [];
      let open: CommittedTransaction | null = null;
      for (;;) {
        const rows = await sql<{ lsn: string; data: string }[]>`
          SELECT lsn::text AS lsn, data FROM pg_logical_slot_get_changes(${name}, NULL, ${ORACLE_CHUNK}, 'include-xids', '0', 'skip-empty-xacts', '1')`;
        if (rows.length === 0) break;
        for (const { lsn, data } of rows) {
          if (data === "BEGIN") open = { end: "", keys: new Set(), tick: null };
          else if (data === "COMMIT") {
            if (open === null) throw new Error(`oracle: COMMIT at ${lsn} without BEGIN`);
            // test_decoding's COMMIT row is written at the transaction's end LSN: the end of its commit record
            open.end = lsn;
            out.push(open);
            open = null;
          } else {
            const m = changeLine.exec(data);
            if (m === null || open === null) throw new Error(`oracle: a change not understood at ${lsn}: ${data.slice(0, 200)}`);
            if (m[2] !== undefined) open.keys.add(m[2]);
            open.keys.add(m[3]);
            if (m[1] === "UPDATE" && m[3] === tickKey) {
              const t = tickValue.exec(m[4]);
              if (t !== null) open.tick = Number(t[1]);
            }
          }
        }
      }
      if (open !== null) throw new Error("oracle: a transaction without its COMMIT");
      return out;
    },
    async drop() {
      await sql`SELECT pg_drop_replication_slot(${name})`;
    },
  };
}

/** What {@link checkAnnounced} found for one listener. */
export interface Announcement {
  /** Transactions checked. */
  transactions: number;
  /** Announced by their keys, and by a `"keys": null` refresh. */
  byKeys: number;
  byRefresh: number;
  /** Per transaction (the oracle's order): when its first covering event arrived (Date.now() ms), or null. */
  heardAt: (number | null)[];
  /** What was not announced, or out of order (at most a few listed). */
  problems: string[];
  /** Problems in all (the list is cut). */
  problemCount: number;
}

/**
 * Checks that `listener` heard of each of `transactions` (see the module comment): the first
 * `change` event at or past a transaction's commit end (in arrival order, versions placed by
 * {@link versionLsn}) lists every key of it or is a refresh. Also a problem: an event whose
 * version cannot be placed, and a change event older than the one before it (the replica went back).
 */
export function checkAnnounced(listener: Listener, transactions: readonly CommittedTransaction[], snapshots: SnapshotLsns): Announcement {
  const problems: string[] = [];
  let problemCount = 0;
  const problem = (text: string) => {
    problemCount++;
    if (problems.length < 5) problems.push(`${listener.label}: ${text}`);
  };
  const changes: { lsn: number; keys: Set<string> | null; at: number; version: string }[] = [];
  let highest = -1;
  for (const e of listener.events) {
    if (e.event !== "change") continue;
    const lsn = versionLsn(e.version, snapshots);
    if (lsn === null) {
      problem(`the version ${e.version} of a change event is neither <snapshot>@<LSN> nor a snapshot the manifest named`);
      continue;
    }
    const value = lsnValue(lsn);
    if (value < highest) problem(`a change event at ${lsn} after one at a later position (the replica went back)`);
    highest = Math.max(highest, value);
    changes.push({ lsn: value, keys: e.keys === null ? null : new Set(e.keys), at: e.at, version: e.version });
  }
  let byKeys = 0;
  let byRefresh = 0;
  const heardAt: (number | null)[] = [];
  let j = 0;
  for (const t of transactions) {
    const end = lsnValue(t.end);
    while (j < changes.length && changes[j].lsn < end) j++;
    if (j === changes.length) {
      problem(`the transaction ending at ${t.end} (keys ${[...t.keys].slice(0, 5).join(", ")}) was never announced: no change event at or past it`);
      heardAt.push(null);
      continue;
    }
    const event = changes[j];
    if (event.keys === null) {
      byRefresh++;
      heardAt.push(event.at);
      continue;
    }
    const missing = [...t.keys].filter((k) => !(event.keys as Set<string>).has(k));
    if (missing.length > 0) {
      problem(`the transaction ending at ${t.end}: keys ${missing.slice(0, 5).join(", ")} not in the first change event past it (${event.version})`);
      heardAt.push(null);
      continue;
    }
    byKeys++;
    heardAt.push(event.at);
  }
  return { transactions: transactions.length, byKeys, byRefresh, heardAt, problems, problemCount };
}
