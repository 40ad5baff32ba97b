/**
 * A role's version token (engine/view-version.ts; docs/api.md "Access control") against the
 * naive oracle's rows of the role, on random tables, roles and live batches:
 * - two tables whose rows the role sees, cut to its columns, are the same give the same token,
 *   whatever differs outside (other rows changed, dropped or added; hidden columns of its rows
 *   changed), and tables whose visible rows differ give different tokens;
 * - over live batches, the token kept up to date from the rows each batch changed equals the
 *   token computed from scratch, at every version (asked in order, and again backwards), and it
 *   stays the same across a batch exactly when the role's visible rows stay the same.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parsePolicy } from "../../src/access/policy.ts";
import { type RoleView, compileView } from "../../src/access/view.ts";
import { type Engine, applyChanges, createEngine } from "../../src/engine/execute.ts";
import { viewVersion, viewVersionFromScratch } from "../../src/engine/view-version.ts";
import { lsnText } from "../../src/live/changes.ts";
import { applyToRecords, changesArb, written } from "../support/live-changes.ts";
import { filterModelArb, rowChangesArb, tableArb } from "../support/table-arbitraries.ts";
import { type Table, type TableRecord, oracleRows } from "../support/table-oracle.ts";
import { buildTableStore } from "../support/table-store.ts";

/** A role of the table: the columns it sees (the key always) and a literal filter model. */
function roleArb(table: Table, records: readonly TableRecord[]) {
  const others = table.specs.filter((s) => s.id !== table.key).map((s) => s.id);
  const columns = fc.oneof({ weight: 1, arbitrary: fc.constant<"*">("*") }, { weight: 3, arbitrary: fc.subarray(others).map((ids) => [table.key, ...ids]) });
  return fc.record({ columns, model: filterModelArb(records, table) });
}

/** The role's view over an engine's store, compiled from a policy file's text. */
function viewOf(role: { columns: "*" | string[]; model: Record<string, Record<string, unknown>> }, engine: Engine): RoleView {
  const text = JSON.stringify({ jwt: { secret: "s".repeat(40) }, roles: { tenant: { columns: role.columns, filterModel: role.model } } });
  const policy = parsePolicy(text, "policy.json", engine.store.schema, { dir: "." });
  const spec = policy.roles.get("tenant");
  if (spec === undefined) throw new Error("the role was not kept");
  const view = compileView(spec, {}, engine.store.schema, policy.id);
  if ("reason" in view) throw new Error(`no view: ${view.detail}`);
  return view;
}

/** What the role sees of the records (the oracle): its rows, cut to its columns, as written, sorted. */
function visibleOf(table: Table, records: readonly TableRecord[], role: { columns: "*" | string[]; model: Record<string, Record<string, unknown>> }): string[] {
  const ids = role.columns === "*" ? table.specs.map((s) => s.id) : role.columns;
  const specs = table.specs.filter((s) => ids.includes(s.id));
  const cut = { specs, key: table.key };
  return oracleRows(records, table, { sortModel: [], filterModel: role.model })
    .map((r) => JSON.stringify(written(cut, r)))
    .sort();
}

/** A restricted role's view: its token is its rows'; an unrestricted one's is the snapshot's version (not what these tests are about). */
function restricted(view: RoleView): boolean {
  return !view.unrestricted;
}

/** Changes to a table: per row a replacement (same key, new values) or a drop, and added rows. */
function variantArb(table: Table, records: readonly TableRecord[]) {
  return rowChangesArb(table, records, { keepWeight: 3, maxAdded: 4, suffix: "add" });
}

describe("a role's version token", () => {
  test("equal exactly when the rows the role sees, cut to its columns, are equal", () => {
    let equalCases = 0;
    let differentCases = 0;
    fc.assert(
      fc.property(
        tableArb.chain(({ table, records }) => fc.record({ table: fc.constant(table), records: fc.constant(records), role: roleArb(table, records), variant: variantArb(table, records) })),
        ({ table, records, role, variant }) => {
          const others = table.specs.filter((s) => s.id !== table.key);
          const make = (key: unknown, values: unknown[]): TableRecord => {
            const record: TableRecord = Object.create(null);
            for (const spec of table.specs) record[spec.id] = spec.id === table.key ? key : values[others.indexOf(spec)];
            return { ...record };
          };
          const changed: TableRecord[] = [];
          records.forEach((r, i) => {
            const what = variant.perRow[i];
            if (what === "keep") changed.push(r);
            else if (what !== "drop") changed.push(make(r[table.key], what));
          });
          for (const a of variant.added) if (!records.some((r) => r[table.key] === a.key)) changed.push(make(a.key, a.values));
          const one = createEngine(buildTableStore(records, table));
          const two = createEngine(buildTableStore(changed, table));
          const viewOne = viewOf(role, one);
          const viewTwo = viewOf(role, two);
          fc.pre(restricted(viewOne));
          const same = JSON.stringify(visibleOf(table, records, role)) === JSON.stringify(visibleOf(table, changed, role));
          if (same) equalCases++;
          else differentCases++;
          const tokenOne = viewVersion(one, viewOne);
          const tokenTwo = viewVersion(two, viewTwo);
          expect(tokenOne === tokenTwo).toBe(same);
        },
      ),
      { numRuns: 300 },
    );
    // both sides of the property were exercised
    expect(equalCases).toBeGreaterThan(10);
    expect(differentCases).toBeGreaterThan(10);
  }, 240_000);

  test("kept up to date over live batches: equal to the token from scratch at every version, unchanged by a batch that changes none of its rows", () => {
    let unchangedBatches = 0;
    fc.assert(
      fc.property(
        tableArb.chain(({ table, records }) => fc.record({ table: fc.constant(table), records: fc.constant(records), role: roleArb(table, records), batches: fc.array(changesArb(table), { minLength: 1, maxLength: 5 }) })),
        ({ table, records, role, batches }) => {
          const rows = records.map((r) => ({ ...r }));
          let engine = createEngine(buildTableStore(rows, table));
          const view = viewOf(role, engine);
          fc.pre(restricted(view));
          const engines: Engine[] = [engine];
          const seen: string[][] = [visibleOf(table, rows, role)];
          let token = viewVersion(engine, view);
          expect(token).toBe(viewVersionFromScratch(engine, view));
          let lsn = 0x100;
          for (const batch of batches) {
            const changes = applyToRecords(table, rows, batch);
            engine = applyChanges(engine, { lsn: lsnText((lsn += 0x100)), commitTime: Date.now(), changes });
            engines.push(engine);
            seen.push(visibleOf(table, rows, role));
            const next = viewVersion(engine, view);
            expect(next).toBe(viewVersionFromScratch(engine, view));
            const same = JSON.stringify(seen[seen.length - 2]) === JSON.stringify(seen[seen.length - 1]);
            if (same) unchangedBatches++;
            expect(next === token).toBe(same);
            token = next;
          }
          // asked again backwards (a request holding an older version): the same tokens
          for (let i = engines.length - 1; i >= 0; i--) expect(viewVersion(engines[i], view)).toBe(viewVersionFromScratch(engines[i], view));
          // a view compiled anew (no token of its own remembered) gets the same tokens from the anchors
          const again = viewOf(role, engines[0]);
          for (let i = 0; i < engines.length; i++) expect(viewVersion(engines[i], again)).toBe(viewVersionFromScratch(engines[i], view));
        },
      ),
      { numRuns: 200 },
    );
    expect(unchangedBatches).toBeGreaterThan(5);
  }, 240_000);
});
