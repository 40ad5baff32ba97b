/**
 * The `number` kind (docs/api.md "Any users table: the schema"): finite doubles, ordered numerically; text
 * filters on `String(n)`, number filters (AG Grid's), set filters; GET `filter[col]` as `v` or
 * `lo,hi`. A number key also keeps trigram lists over its decimal forms: what text filters and
 * search terms on the key read.
 */
import { explainNumberText, formatNumber, parseNumberText } from "../schema/values.ts";
import { DOUBLES, convertDoubles } from "./convert.ts";
import { doublesKey } from "./key.ts";
import { TRIGRAM_PARTS, type KindModule } from "./kind.ts";
import { buildOrdered, orderedKind, rangeGetFilter } from "./ordered.ts";
import { buildTrigramIndex, decimalStrings } from "../bits/trigrams.ts";

/**
 * A number as a request may give it (docs/api.md: AG Grid's `filter` may arrive as a numeric
 * string; GET's `filter[id]=10,50`): optional sign, digits with an optional point, exponent.
 */
export const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** True when a {@link DECIMAL} text names zero (all its digits are 0): then it may parse to 0. */
function namesZero(text: string): boolean {
  return /^[+-]?[0.]*(?:[eE][+-]?\d+)?$/.test(text);
}

/**
 * A finite number from request text ({@link DECIMAL}, surrounding white space allowed), or null.
 * A value that is not zero but parses to 0 (an underflow such as `1e-400`) is refused like an
 * overflow, never taken as 0.
 */
export function parseDecimal(text: string): number | null {
  const t = text.trim();
  if (!DECIMAL.test(t)) return null;
  const x = Number(t);
  if (!Number.isFinite(x)) return null;
  if (x === 0 && !namesZero(t)) return null;
  return x;
}

/** The `number` kind. */
export const NUMBER_KIND: KindModule = orderedKind(
  "number",
  {
    ...DOUBLES,
    format: (_spec, x) => formatNumber(x),
    json: (_spec, x) => formatNumber(x),
    valuesOf(_spec, folded) {
      const x = Number(folded);
      return folded !== "" && Number.isFinite(x) && formatNumber(x) === folded ? [x] : [];
    },
  },
  {
    facet: "range",
    absoluteSort: true,
    convert: (raw, spec) => convertDoubles(raw, spec, parseNumberText, explainNumberText),
    filterTypes: ["text", "number", "set"],
    searchable: false,
    key: { role: doublesKey(DOUBLES.storedValues), parts: ["distinct", ...TRIGRAM_PARTS] },
    recordValue: "bare",
    build(spec, converted, context) {
      const column = buildOrdered(spec, DOUBLES.storedValues(converted), context);
      if (context.key) {
        const keys = column.distinct as Float64Array;
        const { bytes, offsets } = decimalStrings(keys);
        const groups = context.partition === null ? null : { codes: context.partition.codes, count: context.partition.counts.length };
        column.trigrams = buildTrigramIndex(bytes, offsets, keys.length, groups);
      }
      return column;
    },
    getFormDoc: () => '"42": equals; "10,50": inclusive range, either side may be empty.',
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
    jsonSchema: (_spec, key) => (key ? { type: "number" } : { type: ["number", "null"] }),
    claimValue(_spec, value) {
      // + 0: -0 is 0, one filter
      if (typeof value === "number") return Number.isFinite(value) ? value + 0 : null;
      if (typeof value !== "string") return null;
      const x = parseDecimal(value);
      return x === null ? null : x + 0;
    },
    claimForm: "a finite number or a numeric string",
    example: () => 0,
    postgresValue(text) {
      const x = parseNumberText(text);
      if (Number.isNaN(x)) throw new RangeError(`${text} is not a number a double holds exactly`);
      return x;
    },
    // int8, int2, int4, float4, float8, numeric
    postgresTypes: [20, 21, 23, 700, 701, 1700],
  },
);
