/**
 * The naive baseline: plain arrays, as the test oracle does it (filter → sort with a comparator
 * → slice), over the generated records with precomputed folded strings and collation ranks.
 */
import type { BenchQueryShape as Query } from "../query-model.ts";
import { STATUS_VALUES } from "../../src/generate/record.ts";
import { type Dataset, readPeerColumns } from "../datasets.ts";
import { type Answer, type BenchEngine, type OpenReport, type PeerPlan, peerPlan } from "./engine.ts";

/** One record with what matching and ordering need. */
interface NaiveRecord {
  id: number;
  name: string;
  email: string;
  status: string;
  statusCode: number;
  name_folded: string;
  email_folded: string;
  name_rank: number;
  email_rank: number;
}

let records: NaiveRecord[] = [];

/** True when the record passes every test of the plan. */
function matches(record: NaiveRecord, plan: PeerPlan): boolean {
  if (plan.statusCodes !== null && !plan.statusCodes.includes(record.statusCode)) return false;
  for (const test of plan.contains) if (!record[test.column].includes(test.needle)) return false;
  return true;
}

/** The plan's order as a comparator. */
function comparator(plan: PeerPlan): (a: NaiveRecord, b: NaiveRecord) => number {
  const keys = plan.order.map((k) => ({ field: k.column === "status" ? ("statusCode" as const) : k.column, sign: k.desc ? -1 : 1 }));
  return (a, b) => {
    for (const key of keys) {
      const x = a[key.field];
      const y = b[key.field];
      if (x !== y) return x < y ? -key.sign : key.sign;
    }
    return 0;
  };
}

export const naive: BenchEngine = {
  name: "naive",
  note: "JS array of records: filter + sort(comparator on precomputed ranks) + slice",
  semantics: "same",
  maxRows: Number.POSITIVE_INFINITY,

  async open(dataset: Dataset): Promise<OpenReport> {
    const t0 = performance.now();
    const c = await readPeerColumns(dataset);
    const t1 = performance.now();
    records = new Array(c.rows);
    for (let i = 0; i < c.rows; i++) {
      records[i] = {
        id: c.ids[i],
        name: c.names[i],
        email: c.emails[i],
        status: STATUS_VALUES[c.statusCodes[i]],
        statusCode: c.statusCodes[i],
        name_folded: c.namesFolded[i],
        email_folded: c.emailsFolded[i],
        name_rank: c.nameRanks[i],
        email_rank: c.emailRanks[i],
      };
    }
    const t2 = performance.now();
    return { readMs: t1 - t0, buildMs: t2 - t1, bytes: null, bytesNote: "" };
  },

  run(query: Query): Answer {
    const plan = peerPlan(query);
    const matching = records.filter((record) => matches(record, plan));
    const window = matching.sort(comparator(plan)).slice(plan.offset, plan.offset + plan.limit);
    const rows = window.map((r) => ({ id: r.id, name: r.name, email: r.email, status: r.status }));
    return { total: matching.length, ids: rows.map((r) => r.id), body: JSON.stringify(rows) };
  },

  fresh(): void {},

  close(): void {
    records = [];
  },
};
