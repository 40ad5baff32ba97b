/**
 * Committed changes of one PostgreSQL table, from its logical replication (docs/live-replicas.md
 * §7; PostgreSQL's "Logical Replication" and "Streaming Replication Protocol"): one persistent
 * slot (pgoutput) and one publication, through `pg-logical-replication`.
 *
 * - {@link createSlot} makes the slot with an exported snapshot: the table read in a transaction
 *   set to it (ingest/postgres.ts `snapshot`) holds exactly the commits before the slot's
 *   consistent point, and streaming starts there.
 * - {@link ChangeStream} streams from the slot's confirmed position: each committed transaction
 *   that touched the table, as changes in commit order with the LSN of its commit's end and its
 *   commit time; a change of the table's columns or a TRUNCATE as a {@link StreamEvent} of its own.
 *   Nothing is confirmed to PostgreSQL but what the caller confirms ({@link ChangeStream.confirm}),
 *   after publishing, and, while every transaction received is confirmed, the position a server
 *   keepalive names (nothing there remains to publish: see `keepalivePosition`): a stream started
 *   again receives every transaction after the confirmed point again.
 *
 * Values arrive as PostgreSQL's text output (the session set to UTC and ISO dates) and become
 * the JSON values a build from the table reads (`row_to_json`): numbers as numbers (refused when
 * a double would round them), booleans, json and jsonb parsed, every other type as its text.
 */
import pg from "pg";
import { LogicalReplicationService, type Pgoutput, PgoutputPlugin } from "pg-logical-replication";
import type { ColumnSpec } from "../schema/kinds.ts";
import { KINDS, kindOfPostgresType } from "../kinds/registry.ts";
import { type Change, lsnText, lsnValue } from "../live/changes.ts";

// The replication connection hands values over as text: every type parser of the `pg` driver
// (which this module alone uses) is the identity, so values keep their exact text.
for (const module of Object.values(KINDS)) for (const oid of module.postgresTypes) pg.types.setTypeParser(oid, (text: string) => text);

/** A value that cannot be a JSON value of the table's build (a float's Infinity, a number a double would round). */
export class ValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ValueError";
  }
}

/**
 * One column's text output as the JSON value a build reads (see the module comment), by the
 * kind of its type (kind.ts `postgresValue`; an enum type, or a type no kind lists, is its text).
 * @throws ValueError for a number that is not one a build takes
 */
export function valueOfText(typeOid: number, column: string, text: string | null): unknown {
  if (text === null) return null;
  const kind = kindOfPostgresType(typeOid);
  const read = kind === undefined ? null : KINDS[kind].postgresValue;
  if (read === null) return text;
  try {
    return read(text);
  } catch (error) {
    if (error instanceof RangeError) throw new ValueError(`column "${column}": ${error.message}`);
    throw error;
  }
}

/** The connection settings a replication connection and a snapshot read use. */
function clientConfig(url: string, replication: boolean): pg.ClientConfig {
  return {
    connectionString: url,
    ...(replication ? { replication: "database" } : {}),
    options: "-c TimeZone=UTC -c DateStyle=ISO,YMD -c extra_float_digits=1",
    application_name: "users-listing follow",
  } as pg.ClientConfig;
}

/** A slot as created: where streaming starts, and the snapshot to read the table at. */
export interface CreatedSlot {
  /** The slot's consistent point, `X/Y`. */
  lsn: string;
  /** The exported snapshot's name: valid while `close` has not been called. */
  snapshot: string;
  /** Ends the replication connection that holds the exported snapshot (call once the table is read). */
  close: () => Promise<void>;
}

/** Quotes an identifier for SQL. */
function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A table name as quoted identifiers: `schema.table` → `"schema"."table"`. */
export function quoteTableName(table: string): string {
  return table.split(".").map(ident).join(".");
}

/**
 * Creates the logical replication slot `slot` (pgoutput) with an exported snapshot.
 * @throws Error from PostgreSQL: `wal_level` is not `logical`, the slot exists, no room for slots
 */
export async function createSlot(url: string, slot: string): Promise<CreatedSlot> {
  const client = new pg.Client(clientConfig(url, true));
  await client.connect();
  try {
    const result = await client.query(`CREATE_REPLICATION_SLOT ${ident(slot)} LOGICAL pgoutput EXPORT_SNAPSHOT`);
    const row = result.rows[0] as { consistent_point: string; snapshot_name: string };
    return { lsn: lsnText(lsnValue(row.consistent_point)), snapshot: row.snapshot_name, close: () => client.end() };
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
}

/** A slot's state, or null when it does not exist. */
export async function slotState(url: string, slot: string): Promise<{ confirmed: string | null; active: boolean; walStatus: string | null } | null> {
  const client = new pg.Client(clientConfig(url, false));
  await client.connect();
  try {
    // every type reaches this module as its text (the parsers above): a boolean is "t" or "f"
    const result = await client.query("SELECT confirmed_flush_lsn::text AS confirmed, active::text AS active, wal_status FROM pg_replication_slots WHERE slot_name = $1", [slot]);
    if (result.rows.length === 0) return null;
    const row = result.rows[0] as { confirmed: string | null; active: string; wal_status: string | null };
    return { confirmed: row.confirmed, active: row.active === "true", walStatus: row.wal_status };
  } finally {
    await client.end();
  }
}

/** The columns of `table` (`schema.table` or `table`), in their order, from the catalog. */
export async function tableColumns(url: string, table: string): Promise<string[]> {
  const client = new pg.Client(clientConfig(url, false));
  await client.connect();
  try {
    const result = await client.query("SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum", [quoteTableName(table)]);
    return result.rows.map((r: { attname: string }) => r.attname);
  } finally {
    await client.end();
  }
}

/** Drops the slot `slot` when it exists (waiting for a walsender still using it to go). */
export async function dropSlot(url: string, slot: string): Promise<void> {
  const client = new pg.Client(clientConfig(url, false));
  await client.connect();
  try {
    await client.query("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", [slot]);
  } finally {
    await client.end();
  }
}

/**
 * Makes sure the publication `publication` publishes the table, with its kept columns only when
 * some are left out (PostgreSQL 15's column lists: a left-out column never leaves the database).
 * @param columns the kept columns, or null for all
 * @throws Error from PostgreSQL (no such table, a publication of other tables by that name…)
 */
export async function ensurePublication(url: string, publication: string, table: string, columns: readonly string[] | null): Promise<void> {
  const client = new pg.Client(clientConfig(url, false));
  await client.connect();
  try {
    const target = columns === null ? quoteTableName(table) : `${quoteTableName(table)} (${columns.map(ident).join(", ")})`;
    const exists = await client.query("SELECT 1 FROM pg_publication WHERE pubname = $1", [publication]);
    if (exists.rows.length === 0) await client.query(`CREATE PUBLICATION ${ident(publication)} FOR TABLE ${target}`);
    else await client.query(`ALTER PUBLICATION ${ident(publication)} SET TABLE ${target}`);
  } finally {
    await client.end();
  }
}

/** One committed transaction's changes to the table. */
export interface Transaction {
  kind: "transaction";
  /** The end of its commit record, `X/Y`: what is confirmed once it is published. */
  lsn: string;
  /**
   * The start of its commit record, `X/Y`: a restarted slot decodes the transactions whose commit
   * record begins at or after the confirmed position (so one beginning exactly at the previous
   * commit's end is never skipped by confirming that end).
   */
  commitLsn: string;
  /** Its commit time, UTC milliseconds. */
  commitTime: number;
  /**
   * Its changes in order. An upsert's record has every kept column; a value PostgreSQL did not
   * send (an unchanged TOASTed value of an update) is `undefined`: the caller fills it from the
   * row's state before the transaction.
   */
  changes: Change[];
}

/** What a stream reports: a transaction, or a change that needs a new snapshot. */
export type StreamEvent =
  | Transaction
  /** The table's columns changed (ALTER TABLE), or it was truncated: the stream stops there. */
  | { kind: "schema" | "truncate"; lsn: string; detail: string };

/** Options of a {@link ChangeStream}. */
export interface StreamOptions {
  url: string;
  slot: string;
  publication: string;
  /** The table, as `--table` names it (`schema.table`, or `table` in `public`). */
  table: string;
  /** The snapshot's columns (kept ones), the key among them. */
  columns: readonly ColumnSpec[];
  key: string;
  /**
   * Told after each primary keepalive is handled: the server's WAL position it named, and the
   * position confirmed once it was handled (`X/Y` both). For logs and tests.
   */
  onKeepalive?: (walEnd: string, confirmed: string) => void;
}

/**
 * Sends a standby status update saying that everything before `lsn` is durable here: its
 * written, flushed and applied positions are `lsn` itself. The protocol's field is "the last WAL
 * byte + 1" — the position just past what is kept, which is what a commit's end LSN and a
 * keepalive's WAL end already are — and PostgreSQL decodes a restarted slot from it, skipping each
 * transaction whose commit record begins before it (so a position one past a commit's end would
 * skip a transaction whose commit record begins exactly there, the next WAL record).
 *
 * `LogicalReplicationService.acknowledge` (pg-logical-replication 2.5.0) adds one to the LSN it
 * is given (it takes the start of a received message, whose last byte lies beyond it): it is
 * handed `lsn - 1`, so the position sent is `lsn` exactly. test/live/pg-changes.test.ts checks the
 * slot's `confirmed_flush_lsn` against the confirmed commit's end, byte for byte.
 */
function sendPosition(service: LogicalReplicationService, lsn: string): Promise<boolean> {
  const value = lsnValue(lsn);
  // the start of WAL: nothing to say (a slot is never behind it)
  if (value === 0) return Promise.resolve(false);
  return service.acknowledge(lsnText(value - 1), false);
}

/** pgoutput's relation as it reaches the handler. */
interface Relation {
  schema: string;
  name: string;
  columns: { name: string; typeOid: number }[];
}

/** A commit time as the parser gives it (microseconds since the Unix epoch, a BigInt) in UTC milliseconds. */
function commitMillis(time: unknown): number {
  const micros = typeof time === "bigint" ? time : BigInt(String(time));
  return Number(micros / 1000n);
}

/**
 * The stream of a slot's committed transactions of one table (see the module comment). Events
 * are handed to `onEvent` one at a time, in commit order; the stream waits for each to be handled.
 */
export class ChangeStream {
  private service: LogicalReplicationService | null = null;
  private stopped = false;
  /** The transaction being received, from its begin to its commit. */
  private open: { changes: Change[]; touched: boolean } | null = null;
  /** The relation last described for the table (its columns), once seen. */
  private relation: Relation | null = null;
  /** The last LSN confirmed to PostgreSQL (it only moves forward). */
  private confirmed = "0/0";
  /** The commit LSN of the last transaction of the table handed to `onEvent`. */
  private received = "0/0";
  /**
   * A schema change or a TRUNCATE was handed to `onEvent`: it is never confirmed (a publisher
   * that stops before its new snapshot must receive it again), so no keepalive moves past it.
   */
  private held = false;
  /** Data messages being handled now (the library hands them over one at a time, each awaited). */
  private handling = 0;

  constructor(private readonly options: StreamOptions) {}

  /**
   * Streams from the slot's confirmed position until {@link stop} or an error.
   * @param onEvent handles an event (publishes it); the stream waits for it
   * @param onError a connection or protocol error: the stream has ended (start it again)
   */
  async start(onEvent: (event: StreamEvent) => Promise<void>, onError: (error: Error) => void): Promise<void> {
    const service = new LogicalReplicationService(clientConfig(this.options.url, false), { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: true } });
    this.service = service;
    this.open = null;
    this.relation = null;
    this.held = false;
    // the slot's own position: a reply to a keepalive before anything is confirmed names it (a
    // position below it would move the slot back in PostgreSQL's memory)
    const slot = await slotState(this.options.url, this.options.slot);
    if (slot?.confirmed) this.confirmed = lsnText(lsnValue(slot.confirmed));
    const table = this.options.table.includes(".") ? this.options.table : `public.${this.options.table}`;
    // the same relation object stands for every row message after its Relation message
    const ours = new WeakMap<Relation, boolean>();
    const isTable = (relation: Relation) => {
      let is = ours.get(relation);
      if (is === undefined) {
        is = `${relation.schema}.${relation.name}` === table;
        ours.set(relation, is);
      }
      return is;
    };
    service.on("data", async (_lsn: string, message: Pgoutput.Message) => {
      this.handling++;
      try {
        await this.receive(message, isTable, onEvent);
      } catch (error) {
        onError(error as Error);
        void this.stop();
      } finally {
        this.handling--;
      }
    });
    service.on("heartbeat", async (lsn: string, _time: number, shouldRespond: boolean) => {
      const position = this.keepalivePosition(lsn);
      if (position !== null) await this.confirm(position).catch(() => {});
      else if (shouldRespond) await sendPosition(service, this.confirmed).catch(() => {});
      this.options.onKeepalive?.(lsn, this.confirmed);
    });
    // subscribe's promise settles when streaming ends: started is the "start" event
    await new Promise<void>((resolve, reject) => {
      let started = false;
      service.once("start", () => {
        started = true;
        resolve();
      });
      const failed = (error: Error) => {
        if (!started) reject(error);
        else if (!this.stopped) onError(error);
      };
      service.on("error", failed);
      service.subscribe(new PgoutputPlugin({ protoVersion: 1, publicationNames: [this.options.publication] }), this.options.slot).then(
        () => {
          if (!started) reject(new Error("logical replication ended before it started"));
          else if (!this.stopped) onError(new Error("logical replication ended"));
        },
        failed,
      );
    });
  }

  /** Handles one pgoutput message. */
  private async receive(message: Pgoutput.Message, isTable: (r: Relation) => boolean, onEvent: (event: StreamEvent) => Promise<void>): Promise<void> {
    switch (message.tag) {
      case "begin":
        this.open = { changes: [], touched: false };
        return;
      case "relation": {
        const relation = message as Relation;
        if (!isTable(relation)) return;
        const problem = this.columnProblem(relation);
        this.relation = relation;
        if (problem !== null) {
          this.held = true;
          await onEvent({ kind: "schema", lsn: this.confirmed, detail: problem });
        }
        return;
      }
      case "insert":
      case "update":
      case "delete": {
        if (!isTable(message.relation) || this.open === null) return;
        this.open.touched = true;
        this.open.changes.push(...this.changesOf(message));
        return;
      }
      case "truncate": {
        if (!message.relations.some(isTable)) return;
        this.held = true;
        await onEvent({ kind: "truncate", lsn: this.confirmed, detail: "TRUNCATE" });
        return;
      }
      case "commit": {
        const open = this.open;
        this.open = null;
        if (open === null || !open.touched) return;
        const lsn = lsnText(lsnValue(message.commitEndLsn as string));
        this.received = lsn;
        const commitLsn = lsnText(lsnValue(message.commitLsn as string));
        await onEvent({ kind: "transaction", lsn, commitLsn, commitTime: commitMillis(message.commitTime), changes: open.changes });
        return;
      }
      default:
        return;
    }
  }

  /** Why the relation's columns are not the snapshot's (a schema change), or null. */
  private columnProblem(relation: Relation): string | null {
    const names = relation.columns.map((c) => c.name);
    const expected = this.options.columns.map((c) => c.id);
    const missing = expected.filter((id) => !names.includes(id));
    const added = names.filter((name) => !expected.includes(name));
    if (missing.length === 0 && added.length === 0) return null;
    return `the table's columns changed (${[...missing.map((m) => `-${m}`), ...added.map((a) => `+${a}`)].join(", ")})`;
  }

  /** Each relation's column types by name (a relation is sent once and stands for every row message after it). */
  private readonly relationTypes = new WeakMap<Relation, Map<string, number>>();

  /** The type OIDs of `relation`'s columns, by name. */
  private typesOf(relation: Relation): Map<string, number> {
    let types = this.relationTypes.get(relation);
    if (types === undefined) {
      types = new Map(relation.columns.map((c) => [c.name, c.typeOid]));
      this.relationTypes.set(relation, types);
    }
    return types;
  }

  /** The record of a tuple: every snapshot column from its text (undefined: not sent). */
  private recordOf(relation: Relation, tuple: Record<string, unknown>): Record<string, unknown> {
    const record: Record<string, unknown> = Object.create(null);
    const types = this.typesOf(relation);
    for (const spec of this.options.columns) {
      const text = tuple[spec.id];
      record[spec.id] = text === undefined ? undefined : valueOfText(types.get(spec.id) ?? 25, spec.id, text as string | null);
    }
    return { ...record };
  }

  /** A row message's changes: an upsert, a delete, or a key change's delete and upsert. */
  private changesOf(message: Pgoutput.MessageInsert | Pgoutput.MessageUpdate | Pgoutput.MessageDelete): Change[] {
    const relation = message.relation;
    const key = this.options.key;
    const types = this.typesOf(relation);
    const keyOf = (tuple: Record<string, unknown> | null): number | string | undefined => {
      const text = tuple?.[key];
      if (text === undefined || text === null) return undefined;
      return valueOfText(types.get(key) ?? 25, key, text as string) as number | string;
    };
    if (message.tag === "insert") return [{ op: "upsert", record: this.recordOf(relation, message.new) }];
    if (message.tag === "delete") {
      const old = keyOf(message.key ?? message.old);
      if (old === undefined) throw new Error(`a DELETE on ${this.options.table} did not carry the key "${key}": make it the primary key, or set REPLICA IDENTITY FULL`);
      return [{ op: "delete", key: old }];
    }
    const record = this.recordOf(relation, message.new);
    const old = keyOf(message.key ?? message.old);
    if (old !== undefined && old !== record[key]) return [{ op: "delete", key: old }, { op: "upsert", record }];
    return [{ op: "upsert", record }];
  }

  /**
   * The position a primary keepalive naming `walEnd` (the server's position in the WAL it has
   * decoded and sent) lets this stream confirm, or null when it must not move the position.
   *
   * Everything the server sent before the keepalive precedes it on the connection, so once every
   * transaction of the table received so far is confirmed (published), none is being received
   * (between its Begin and its Commit) or handled, and no schema change or TRUNCATE waits for its
   * new snapshot, nothing up to `walEnd` remains to publish: what lies there is other tables'
   * WAL, transactions that did not touch the table, or transactions still open (the slot sends
   * those whole once they commit, wherever the confirmed position is). Confirming `walEnd` then
   * lets PostgreSQL release that WAL while the table is idle. Otherwise the keepalive may not move
   * the position at all: a transaction received but not yet published may be at or below
   * `walEnd`, and a publisher stopped after such a confirmation would never receive it again.
   * A message the library has read but not handed over yet is handled before any keepalive read
   * after it is (the first of them is being handled when the keepalive arrives), so `handling`
   * covers it.
   */
  private keepalivePosition(walEnd: string): string | null {
    if (this.held || this.open !== null || this.handling > 0) return null;
    if (lsnValue(this.received) > lsnValue(this.confirmed)) return null;
    return lsnValue(walEnd) > lsnValue(this.confirmed) ? walEnd : null;
  }

  /**
   * Confirms to PostgreSQL that everything up to `lsn` is published: the slot keeps WAL from
   * there on, and a restarted stream starts there. A position at or below the confirmed one
   * changes nothing (PostgreSQL never moves a slot back).
   */
  async confirm(lsn: string): Promise<void> {
    if (lsnValue(lsn) <= lsnValue(this.confirmed)) return;
    this.confirmed = lsn;
    if (this.service !== null) await sendPosition(this.service, lsn);
  }

  /** Ends the stream (the slot keeps its confirmed position). */
  async stop(): Promise<void> {
    this.stopped = true;
    const service = this.service;
    this.service = null;
    await service?.stop().catch(() => {});
  }
}
