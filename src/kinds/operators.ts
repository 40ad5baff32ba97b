/**
 * The operator registry: every AG Grid filter model a column takes
 * (docs/api.md "Filter model"), one entry per filter type, each validating a model
 * and compiling it into the column test (src/query/types.ts `ColumnTest`) its kind evaluates.
 * Which filter types a column takes is its kind's (kind.ts `filterTypes`); what a type means is
 * here. Adding an operator is an entry here (and its kinds' `filterTypes`).
 */
import type { ColumnTest, TextOp } from "./kind.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import { requestDay } from "./date.ts";
import type { FilterType, KindModule } from "./kind.ts";
import { parseDecimal } from "./number.ts";

/** Reports one bad field of a request: its JSON pointer and what is wrong. */
export type Bad = (pointer: string, detail: string) => void;

/**
 * Longest filter value accepted, in UTF-16 code units (docs/api.md: a GET `filter[<col>]` value
 * and every POST filter value or set value, at most 256 characters).
 */
export const MAX_FILTER_LENGTH = 256;

/** One filter type's operator: its `type`s and how a model of it becomes a column test. */
export interface FilterOperator {
  filterType: FilterType;
  /** The `type` values accepted; the first is the default when `type` is absent (AG Grid's). */
  types: readonly string[];
  /**
   * Validates a simple (non-combined) model and compiles it; reports every problem with `bad`
   * under `at` (a JSON pointer) and returns null then.
   */
  compile(kind: KindModule, spec: ColumnSpec, model: Record<string, unknown>, at: string, bad: Bad): ColumnTest | null;
}

/**
 * A value as JSON for an error message, cut to `max` characters: an error never echoes a large
 * input. A number beyond a double's range (JSON's `1e400` reads as Infinity) is said so, not
 * shown as the `null` JSON would write.
 */
export function shown(value: unknown, max = 80): string {
  if (typeof value === "number" && !Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : "a number beyond the range of a double";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * A finite number from a JSON number or a numeric string of at most {@link MAX_FILTER_LENGTH}
 * characters, white space around it allowed (docs/api.md: AG Grid's `filter` may arrive as
 * `"200"`: coerced); null otherwise.
 */
export function numberOf(v: unknown): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string" && v.length <= MAX_FILTER_LENGTH) return parseDecimal(v);
  return null;
}

const TEXT_TYPES: readonly TextOp[] = ["contains", "notContains", "equals", "notEqual", "startsWith", "endsWith", "blank", "notBlank"];
const NUMBER_TYPES = ["equals", "notEqual", "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual", "inRange", "blank", "notBlank"] as const;
const DATE_TYPES = ["equals", "notEqual", "lessThan", "greaterThan", "inRange", "blank", "notBlank"] as const;

const INF = Number.POSITIVE_INFINITY;

/** A range test. */
function range(lo: number, loOpen: boolean, hi: number, hiOpen: boolean, negate = false): ColumnTest {
  return { op: "range", lo, loOpen, hi, hiOpen, negate };
}

/** AG Grid's text filter, on the value's output string (every kind but json). */
const TEXT: FilterOperator = {
  filterType: "text",
  types: TEXT_TYPES,
  compile(_kind, _spec, model, at, bad) {
    const type = model.type as TextOp;
    if (type === "blank" || type === "notBlank") return { op: "text", type, value: "" };
    const f = model.filter;
    if (typeof f !== "string" && typeof f !== "number") {
      bad(`${at}/filter`, `text filter "${type}" needs a string "filter" (got ${shown(f)})`);
      return null;
    }
    const value = String(f);
    if (value.length > MAX_FILTER_LENGTH) {
      bad(`${at}/filter`, `is ${value.length} characters long; at most ${MAX_FILTER_LENGTH} are accepted`);
      return null;
    }
    return { op: "text", type, value };
  },
};

/** AG Grid's number filter (number columns): `inRange` exclusive at both ends; null passes only `blank`. */
const NUMBER: FilterOperator = {
  filterType: "number",
  types: NUMBER_TYPES,
  compile(_kind, _spec, model, at, bad) {
    const type = model.type as (typeof NUMBER_TYPES)[number];
    if (type === "blank") return { op: "null", negate: false };
    if (type === "notBlank") return { op: "null", negate: true };
    const x = numberOf(model.filter);
    if (x === null) {
      bad(`${at}/filter`, `number filter "${type}" needs a number "filter" (got ${shown(model.filter)})`);
      return null;
    }
    switch (type) {
      case "equals":
        return range(x, false, x, false);
      case "notEqual":
        return range(x, false, x, false, true);
      case "lessThan":
        return range(-INF, false, x, true);
      case "lessThanOrEqual":
        return range(-INF, false, x, false);
      case "greaterThan":
        return range(x, true, INF, false);
      case "greaterThanOrEqual":
        return range(x, false, INF, false);
      case "inRange": {
        const to = numberOf(model.filterTo);
        if (to === null) {
          bad(`${at}/filterTo`, `number filter "inRange" needs a number "filterTo" (got ${shown(model.filterTo)})`);
          return null;
        }
        return range(x, true, to, true);
      }
    }
  },
};

/**
 * AG Grid's date filter (date and datetime columns), comparing UTC calendar days: `equals` the
 * same day, `notEqual` another, `lessThan` an earlier day, `greaterThan` a later one, `inRange`
 * strictly between the two days; null passes only `blank` (docs/api.md "Filter model").
 */
const DATE: FilterOperator = {
  filterType: "date",
  types: DATE_TYPES,
  compile(kind, _spec, model, at, bad) {
    const type = model.type as (typeof DATE_TYPES)[number];
    if (type === "blank") return { op: "null", negate: false };
    if (type === "notBlank") return { op: "null", negate: true };
    const day = (field: "dateFrom" | "dateTo"): number | null => {
      const v = model[field];
      const d = typeof v === "string" && v.length <= MAX_FILTER_LENGTH ? requestDay(v) : Number.NaN;
      if (Number.isNaN(d)) {
        bad(`${at}/${field}`, `date filter "${type}" needs a date "${field}" like "2024-03-01" or "2024-03-01 00:00:00" (got ${shown(v)})`);
        return null;
      }
      return d;
    };
    const interval = kind.dayInterval as (day: number) => [number, number];
    const from = day("dateFrom");
    if (from === null) return null;
    const [start, end] = interval(from);
    switch (type) {
      case "equals":
        return range(start, false, end, true);
      case "notEqual":
        return range(start, false, end, true, true);
      case "lessThan":
        return range(-INF, false, start, true);
      case "greaterThan":
        return range(end, false, INF, false);
      case "inRange": {
        const to = day("dateTo");
        if (to === null) return null;
        return range(end, false, Math.max(end, interval(to)[0]), true);
      }
    }
  },
};

/**
 * AG Grid's set filter: whole values, folded; `null` in `values` matches null (and, on text
 * columns, blank strings). On a number column values compare as numbers (`"1.50"` is 1.5); on an
 * enum or boolean column a value the column cannot hold is refused (docs/api.md "Matching").
 */
const SET: FilterOperator = {
  filterType: "set",
  types: [],
  compile(kind, spec, model, at, bad) {
    const values = model.values;
    if (!Array.isArray(values)) {
      bad(`${at}/values`, `set filter needs an array "values"`);
      return null;
    }
    const out: string[] = [];
    let nulls = false;
    let ok = true;
    values.forEach((v, i) => {
      if (v === null) {
        nulls = true;
        return;
      }
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
        ok = false;
        return bad(`${at}/values/${i}`, `must be a string, a number, a boolean or null (got ${shown(v)})`);
      }
      const s = String(v);
      if (s.length > MAX_FILTER_LENGTH) {
        ok = false;
        return bad(`${at}/values/${i}`, `is ${s.length} characters long; at most ${MAX_FILTER_LENGTH} are accepted`);
      }
      const canonical = kind.setValue(spec, s);
      if (typeof canonical !== "string") {
        ok = false;
        return bad(`${at}/values/${i}`, canonical.reason);
      }
      out.push(canonical);
    });
    return ok ? { op: "set", values: [...new Set(out)], nulls } : null;
  },
};

/** Every filter type's operator (docs/api.md "Filter model"). */
export const OPERATORS: Record<FilterType, FilterOperator> = { text: TEXT, number: NUMBER, date: DATE, set: SET };

/**
 * Compiles one simple AG Grid filter model on a column: checks that the
 * column's kind takes the filter type and that `type` is one of the operator's, then compiles.
 * @returns the column test, or null after reporting every problem with `bad`
 */
export function compileColumnModel(kind: KindModule, spec: ColumnSpec, model: Record<string, unknown>, at: string, bad: Bad): ColumnTest | null {
  const filterType = model.filterType as FilterType;
  if (!(kind.filterTypes as readonly unknown[]).includes(filterType)) {
    const takes = kind.filterTypes.length === 0 ? "it is returned, never filtered" : `it takes ${kind.filterTypes.join(", ")}`;
    // an unknown filterType is the field's fault; a known one that does not fit, the model's
    const where = typeof filterType === "string" && Object.hasOwn(OPERATORS, filterType) ? at : `${at}/filterType`;
    bad(where, `a ${shown(model.filterType)} filter does not fit column "${spec.id}" (${spec.kind}); ${takes}: ${shown(model, 200)}`);
    return null;
  }
  const operator = OPERATORS[filterType];
  if (operator.types.length > 0) {
    const type = model.type ?? operator.types[0];
    if (!operator.types.includes(type as string)) {
      bad(`${at}/type`, `${filterType} filter type must be one of ${operator.types.join(", ")} (got ${shown(type)})`);
      return null;
    }
    return operator.compile(kind, spec, { ...model, type }, at, bad);
  }
  return operator.compile(kind, spec, model, at, bad);
}
