/**
 * The global search (docs/api.md "Global search"): every term, folded, must be contained in some
 * searchable column's folded output string. The planner ordered the terms (fewest expected rows
 * first) and chose, per term, to evaluate it over every row from the indexes or to check it on
 * the rows the terms before it left; this module runs that plan. A term planned as `evaluate`
 * whose rows left turn out fewer than expected is checked instead (the cheaper of the two once
 * the count is exact): with analyze, the step then says `check`.
 */
import { bytesMatch } from "../bits/folded-match.ts";
import { fold } from "../collation/collation.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";
import type { Store } from "../store/types.ts";
import { type Node, type RunContext, andNodes, bitsNode, nodeCount, orNodes, rowsOfNode, runStep } from "./evaluate.ts";
import type { TermStep } from "./plan.ts";
import { COST } from "./planner.ts";

const encoder = new TextEncoder();

/** True when a folded needle could be part of a number's decimal form (digits, sign, point, exponent). */
function couldBeInNumber(needle: string): boolean {
  return /^[-+0-9.e]+$/.test(needle);
}

/**
 * Whether one row holds the term (docs/api.md "Global search"), checked on the row's values in
 * every searched column: the same rule the term's evaluation over every row applies.
 * @param searched the columns the search looks into (default: every searchable column)
 */
export function termChecker(store: Store, term: string, searched: readonly StoredColumn[] = store.searchable): (row: number) => boolean {
  const needleText = fold(term);
  // stored values are well-formed Unicode: a lone surrogate matches nothing
  if (!needleText.isWellFormed()) return () => false;
  const needle = encoder.encode(needleText);
  const texts: { folded: Uint8Array; offsets: Uint32Array }[] = [];
  const ranked: { ranks: Uint32Array; passes: Uint8Array }[] = [];
  let decimals: Float64Array | null = null;
  for (const column of searched) {
    if (column.folded !== null && column.foldedOffsets !== null) texts.push({ folded: column.folded, offsets: column.foldedOffsets });
    else if (column.key && column.distinct !== null) {
      if (couldBeInNumber(needleText)) decimals = column.distinct;
    } else {
      const passing = KINDS[column.spec.kind].passingRanks;
      if (passing !== null && column.rankByRow !== null) ranked.push({ ranks: column.rankByRow, passes: passing(column, { op: "text", type: "contains", value: term }) });
    }
  }
  const keys = decimals;
  return (row) => {
    for (const r of ranked) if (r.passes[r.ranks[row]] === 1) return true;
    for (const t of texts) if (bytesMatch(t.folded, t.offsets[row], t.offsets[row + 1], "contains", needle)) return true;
    return keys !== null && String(keys[row]).includes(needleText);
  };
}

/** Cost of checking one row for a term: each searched column's check. */
function checkCost(searched: readonly StoredColumn[]): number {
  return Math.max(1, searched.length) * COST.SEARCH_CHECK_COLUMN;
}

/**
 * Runs a search's terms in the planned order (see the module comment).
 * @param searched the columns the terms look into (plan.ts: the search step's `searched`)
 */
export function evaluateSearch(ctx: RunContext, terms: TermStep[], searched: readonly StoredColumn[] = ctx.store.searchable): Node {
  const store = ctx.store;
  let node: Node | null = null;
  for (const term of terms) {
    const started = ctx.analyze ? performance.now() : 0;
    if (node === null) node = evaluateTerm(ctx, term);
    else if (node.kind === "codes" && node.mask === 0) {
      // nothing left: the other terms are not run
      if (ctx.analyze) term.rows = 0;
      continue;
    } else if (node.kind !== "bits") node = andNodes(store, [node, evaluateTerm(ctx, term)]);
    else {
      const left = nodeCount(store, node);
      if (term.strategy === "evaluate" && left * checkCost(searched) < term.estimatedCost) term.strategy = "check";
      if (term.strategy === "evaluate") node = andNodes(store, [node, evaluateTerm(ctx, term)]);
      else node = checkTerm(store, node, term.term, searched);
    }
    if (ctx.analyze) {
      term.ms = performance.now() - started;
      term.rows = nodeCount(store, node);
    }
  }
  return node ?? { kind: "all" };
}

/** A term over every row: the union of its alternatives. */
function evaluateTerm(ctx: RunContext, term: TermStep): Node {
  if (term.children.length === 0) return { kind: "codes", mask: 0 };
  return orNodes(ctx.store, term.children.map((c) => runStep(ctx, c)));
}

/** The rows of `node` that hold the term, checked one by one. */
function checkTerm(store: Store, node: Node & { kind: "bits" }, term: string, searched: readonly StoredColumn[]): Node {
  const check = termChecker(store, term, searched);
  const rows = rowsOfNode(store, node);
  const kept = new Uint32Array(rows.length);
  let k = 0;
  for (let i = 0; i < rows.length; i++) if (check(rows[i])) kept[k++] = rows[i];
  return bitsNode(store, null, kept.subarray(0, k));
}
