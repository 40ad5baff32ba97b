/**
 * Orama (@orama/orama 3), run at 100k rows at most and labelled "different semantics": its
 * full-text search tokenizes values and matches terms by prefix (not a substring of the folded
 * value), and it sorts strings its own way. Timed, but its answers are not expected to match.
 * Filters: `term` on the property (tolerance 0) plus `where` on the status enum; sorts:
 * `sortBy` on one property, or a comparator for two keys.
 */
import { type AnyOrama, create, insertMultiple, search } from "@orama/orama";
import type { BenchQueryShape as Query } from "../query-model.ts";
import { STATUS_VALUES } from "../../src/generate/record.ts";
import { type Dataset, readPeerColumns } from "../datasets.ts";
import type { Answer, BenchEngine, OpenReport } from "./engine.ts";

interface OramaUser {
  id: string;
  uid: number;
  name: string;
  email: string;
  status: string;
}

let db: AnyOrama | null = null;

/** Orama's search parameters for one query of the benchmark's subset. */
function searchParams(query: Query): Record<string, unknown> {
  const params: Record<string, unknown> = { offset: query.offset, limit: query.limit, tolerance: 0 };
  const tests = query.filter === null ? [] : query.filter.kind === "and" ? query.filter.children : [query.filter];
  for (const test of tests) {
    if (test.kind === "status") params.where = { status: test.codes.length === 1 ? { eq: STATUS_VALUES[test.codes[0]] } : { in: test.codes.map((c) => STATUS_VALUES[c]) } };
    else if (test.kind === "text") {
      params.term = test.value;
      params.properties = [test.column];
    } else throw new Error(`orama: ${test.kind} filters are not implemented`);
  }
  const sort = query.sort;
  if (sort.length === 1) {
    params.sortBy = { property: sort[0].column === "id" ? "uid" : sort[0].column, order: sort[0].direction === "asc" ? "ASC" : "DESC" };
  } else if (sort.length > 1) {
    params.sortBy = (a: [number, number, OramaUser], b: [number, number, OramaUser]) => {
      for (const key of sort) {
        const x = key.column === "id" ? a[2].uid : a[2][key.column as keyof OramaUser];
        const y = key.column === "id" ? b[2].uid : b[2][key.column as keyof OramaUser];
        const c = typeof x === "number" ? (x as number) - (y as number) : String(x).localeCompare(String(y));
        if (c !== 0) return key.direction === "asc" ? c : -c;
      }
      return 0;
    };
  }
  return params;
}

export const orama: BenchEngine = {
  name: "orama",
  note: "different semantics: tokenized prefix term search, its own string sort; ≤ 100k rows",
  semantics: "different",
  maxRows: 100_000,

  async open(dataset: Dataset): Promise<OpenReport> {
    const t0 = performance.now();
    const c = await readPeerColumns(dataset, { folded: false, ranks: false });
    const t1 = performance.now();
    db = create({ schema: { uid: "number", name: "string", email: "string", status: "enum" } as const });
    const docs: OramaUser[] = new Array(c.rows);
    for (let i = 0; i < c.rows; i++) {
      docs[i] = { id: String(c.ids[i]), uid: c.ids[i], name: c.names[i], email: c.emails[i], status: STATUS_VALUES[c.statusCodes[i]] };
    }
    await insertMultiple(db, docs as never, 10_000);
    const t2 = performance.now();
    return { readMs: t1 - t0, buildMs: t2 - t1, bytes: null, bytesNote: "" };
  },

  async run(query: Query): Promise<Answer> {
    const result = (await search(db as AnyOrama, searchParams(query) as never)) as { count: number; hits: { document: OramaUser }[] };
    const rows = result.hits.map((h) => ({ id: h.document.uid, name: h.document.name, email: h.document.email, status: h.document.status }));
    return { total: result.count, ids: rows.map((r) => r.id), body: JSON.stringify(rows) };
  },

  fresh(): void {},

  close(): void {
    db = null;
  },
};
