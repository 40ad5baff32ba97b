/**
 * The `number` kind (docs/api.md "Columns beyond the four"): finite doubles, ordered
 * numerically; text filters on `String(n)`, number filters (AG Grid's), set filters; GET
 * `filter[col]` as `v` or `lo,hi`.
 */
import type { ConvertedColumn } from "./convert.ts";
import { explainNumberText, formatNumber, parseNumberText } from "../schema/values.ts";
import { convertDoubles } from "./convert.ts";
import type { KindModule } from "./kind.ts";
import { orderedKind, rangeGetFilter } from "./ordered.ts";

/**
 * A number as a request may give it (docs/api.md: AG Grid's `filter` may arrive as a numeric
 * string; GET's `filter[id]=10,50`): optional sign, digits with an optional point, exponent.
 */
export const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A finite number from request text ({@link DECIMAL}, surrounding white space allowed), or null. */
export function parseDecimal(text: string): number | null {
  const t = text.trim();
  if (!DECIMAL.test(t)) return null;
  const x = Number(t);
  return Number.isFinite(x) ? x : null;
}

/** The `number` kind. */
export const NUMBER_KIND: KindModule = orderedKind(
  "number",
  {
    storedValues: (c: ConvertedColumn) => (c as Extract<ConvertedColumn, { values: Float64Array }>).values,
    format: (_spec, x) => formatNumber(x),
    json: (_spec, x) => formatNumber(x),
    valuesOf(_spec, folded) {
      const x = Number(folded);
      return folded !== "" && Number.isFinite(x) && formatNumber(x) === folded ? [x] : [];
    },
  },
  {
    convert: (raw, spec) => convertDoubles(raw, spec, parseNumberText, explainNumberText),
    filterTypes: ["text", "number", "set"],
    getFormDoc: '"42": equals; "10,50": inclusive range, either side may be empty.',
    dayInterval: null,
    setValue(_spec, text) {
      const x = parseDecimal(text);
      return x === null ? { reason: `"${text}" is not a number` } : formatNumber(x);
    },
    getFilter: (_spec, value) =>
      rangeGetFilter(value, (text) => {
        const x = parseDecimal(text);
        if (x === null) return `"${text}" is not a finite number`;
        return { start: x, end: x, endOpen: false, echo: formatNumber(x) };
      }),
    jsonSchema: () => ({ type: ["number", "null"] }),
  },
);

