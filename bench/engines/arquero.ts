/**
 * arquero: a column table over the same eight columns as the SQL peers (ranks and ids as typed
 * arrays, strings as arrays), queried with filter (a registered `contains` op on the folded
 * columns) → numRows → orderby (rank columns, then id) → objects({offset, limit}).
 */
import * as aq from "arquero";
import type { BenchQueryShape as Query } from "../query-model.ts";
import { STATUS_VALUES } from "../../src/generate/record.ts";
import { type Dataset, readPeerColumns } from "../datasets.ts";
import { type Answer, type BenchEngine, type OpenReport, type PeerPlan, peerPlan } from "./engine.ts";

type ColumnTable = ReturnType<typeof aq.table>;

let table: ColumnTable | null = null;
let registered = false;

/** The plan's predicate as an arquero expression string, with its parameters. */
function filterExpression(plan: PeerPlan): { expression: string; params: Record<string, string> } | null {
  const parts: string[] = [];
  const params: Record<string, string> = {};
  if (plan.statusCodes !== null) {
    const alternatives = plan.statusCodes.map((code, i) => {
      params[`s${i}`] = STATUS_VALUES[code];
      return `d.status === $.s${i}`;
    });
    parts.push(alternatives.length === 0 ? "false" : `(${alternatives.join(" || ")})`);
  }
  plan.contains.forEach((test, i) => {
    params[`n${i}`] = test.needle;
    parts.push(`op.contains(d.${test.column}, $.n${i})`);
  });
  if (parts.length === 0) return null;
  return { expression: `(d, $) => ${parts.join(" && ")}`, params };
}

export const arquero: BenchEngine = {
  name: "arquero",
  note: "arquero 8 column table; filter with a registered contains() on precomputed folded text, orderby precomputed ranks (in its favour)",
  semantics: "same",
  maxRows: Number.POSITIVE_INFINITY,

  async open(dataset: Dataset): Promise<OpenReport> {
    if (!registered) {
      aq.addFunction("contains", (value: string, needle: string) => value.includes(needle), { override: true });
      registered = true;
    }
    const t0 = performance.now();
    const c = await readPeerColumns(dataset);
    const t1 = performance.now();
    const status = new Array<string>(c.rows);
    for (let i = 0; i < c.rows; i++) status[i] = STATUS_VALUES[c.statusCodes[i]];
    table = aq.table({
      id: c.ids,
      name: c.names,
      email: c.emails,
      status,
      name_folded: c.namesFolded,
      email_folded: c.emailsFolded,
      name_rank: c.nameRanks,
      email_rank: c.emailRanks,
    });
    const t2 = performance.now();
    return { readMs: t1 - t0, buildMs: t2 - t1, bytes: null, bytesNote: "" };
  },

  run(query: Query): Answer {
    const plan = peerPlan(query);
    let t = table as ColumnTable;
    const filter = filterExpression(plan);
    if (filter !== null) t = t.params(filter.params).filter(filter.expression);
    const total = t.numRows();
    t = t.orderby(...plan.order.map((k) => (k.desc ? aq.desc(k.column) : k.column)));
    const rows = t.objects({ offset: plan.offset, limit: plan.limit, columns: ["id", "name", "email", "status"] }) as { id: number }[];
    const ids = new Array<number>(rows.length);
    for (let i = 0; i < rows.length; i++) ids[i] = rows[i].id;
    return { total, ids, body: JSON.stringify(rows) };
  },

  fresh(): void {},

  close(): void {
    table = null;
  },
};
