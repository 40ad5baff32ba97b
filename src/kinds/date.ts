/**
 * The `date` and `datetime` kinds (docs/api.md "Any users table: the schema"): a calendar day stored
 * as its day number, an instant stored as UTC milliseconds; ordered by time; text filters on
 * `YYYY-MM-DD` / `YYYY-MM-DDTHH:mm:ss.sssZ`, AG Grid date filters comparing UTC calendar days,
 * set filters; GET `filter[col]` as a value or `lo,hi`, a date-only value covering its UTC day.
 */
import { fold } from "../collation/collation.ts";
import { DAY_MS, explainDate, explainDateTime, formatDate, formatDateTime, parseDate, parseDateTime } from "../schema/values.ts";
import { DOUBLES, convertDoubles } from "./convert.ts";
import type { KindModule } from "./kind.ts";
import { type GetBound, orderedKind, rangeGetFilter } from "./ordered.ts";

/** A claim for a date or date-time column: a string, as a request's date value (checked when the filter is compiled). */
const stringClaim = (_spec: unknown, value: unknown) => (typeof value === "string" ? value : null);

/**
 * The UTC day of a request's date value (an AG Grid `dateFrom` like `2024-03-01 00:00:00`, a
 * `YYYY-MM-DD`, or any ISO 8601 date-time docs/api.md accepts), or NaN.
 */
export function requestDay(text: string): number {
  const t = text.trim();
  const day = parseDate(t);
  if (!Number.isNaN(day)) return day;
  const ms = parseDateTime(t);
  return Number.isNaN(ms) ? Number.NaN : Math.floor(ms / DAY_MS);
}

/** The `date` kind: day numbers. */
export const DATE_KIND: KindModule = orderedKind(
  "date",
  {
    ...DOUBLES,
    format: (_spec, day) => formatDate(day),
    json: (_spec, day) => `"${formatDate(day)}"`,
    valuesOf(_spec, folded) {
      const day = parseDate(folded);
      return !Number.isNaN(day) && formatDate(day) === folded ? [day] : [];
    },
  },
  {
    facet: "range",
    convert: (raw, spec) => convertDoubles(raw, spec, parseDate, explainDate),
    getFormDoc: () => '"2024-03-01": that day; "2024-01-01,2024-03-31": an inclusive range of days, either side may be empty.',
    filterTypes: ["text", "date", "set"],
    searchable: false,
    dayInterval: (day) => [day, day + 1],
    setValue: (_spec, text) => fold(text),
    getFilter: (_spec, value) =>
      rangeGetFilter(value, (text): GetBound | string => {
        const day = requestDay(text);
        if (Number.isNaN(day)) return `"${text}" is not a date (YYYY-MM-DD) or an ISO 8601 date-time`;
        return { start: day, end: day, endOpen: false, echo: formatDate(day) };
      }),
    jsonSchema: () => ({ type: ["string", "null"], format: "date" }),
    recordValue: "string",
    claimValue: stringClaim,
    claimForm: "a date string (YYYY-MM-DD)",
    example: () => "2000-01-01",
    postgresValue: null,
    // date
    postgresTypes: [1082],
  },
);

/** The `datetime` kind: UTC milliseconds. */
export const DATETIME_KIND: KindModule = orderedKind(
  "datetime",
  {
    ...DOUBLES,
    format: (_spec, ms) => formatDateTime(ms),
    json: (_spec, ms) => `"${formatDateTime(ms)}"`,
    valuesOf(_spec, folded) {
      const ms = parseDateTime(folded.toUpperCase());
      return !Number.isNaN(ms) && fold(formatDateTime(ms)) === folded ? [ms] : [];
    },
  },
  {
    facet: "range",
    convert: (raw, spec) => convertDoubles(raw, spec, parseDateTime, explainDateTime),
    getFormDoc: () => 'An ISO 8601 date-time: that instant; a date: its whole UTC day; "lo,hi": an inclusive range, either side may be empty.',
    filterTypes: ["text", "date", "set"],
    searchable: false,
    dayInterval: (day) => [day * DAY_MS, (day + 1) * DAY_MS],
    setValue: (_spec, text) => fold(text),
    getFilter: (_spec, value) =>
      rangeGetFilter(value, (text): GetBound | string => {
        const day = parseDate(text);
        if (!Number.isNaN(day)) return { start: day * DAY_MS, end: (day + 1) * DAY_MS, endOpen: true, echo: formatDate(day) };
        const ms = parseDateTime(text);
        if (Number.isNaN(ms)) return `"${text}" is not an ISO 8601 date-time or a date (YYYY-MM-DD)`;
        return { start: ms, end: ms, endOpen: false, echo: formatDateTime(ms) };
      }),
    jsonSchema: () => ({ type: ["string", "null"], format: "date-time" }),
    recordValue: "string",
    claimValue: stringClaim,
    claimForm: "an ISO 8601 date-time string",
    example: () => "2000-01-01T00:00:00.000Z",
    postgresValue: null,
    // timestamp (read as UTC), timestamptz
    postgresTypes: [1114, 1184],
  },
);
