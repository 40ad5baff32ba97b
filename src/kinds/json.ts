/**
 * The `json` kind (docs/api.md "Any users table: the schema"): any JSON value, kept and returned as
 * given; never sorted or filtered (a sort or filter on it is a 400), so the store keeps nothing
 * for it but its text in the records.
 */
import { appendBytes, finishByteColumn, growingByteColumn } from "../bits/byte-column.ts";
import { type ConvertedColumn, convertJson } from "./convert.ts";
import { type ColumnWriter, type KindModule, emptyStoredColumn } from "./kind.ts";

type JsonColumn = Extract<ConvertedColumn, { kind: "json" }>;

/** The first byte of the literal `null`. */
const LETTER_N = 0x6e;

/** A json column written from its JSON literals (kind.ts `ColumnWriter`): each kept as it is. */
function jsonWriter(rows: number): ColumnWriter {
  const out = growingByteColumn(Math.max(16, rows), Math.max(1024, rows * 16));
  let nulls = 0;
  return {
    from: "literal",
    put(bytes, start, end) {
      appendBytes(out, bytes, start, end);
      if (bytes[start] === LETTER_N) nulls++;
    },
    finish: () => ({ kind: "json", texts: finishByteColumn(out), nulls }),
  };
}

/** The `json` kind. */
export const JSON_KIND: KindModule = {
  kind: "json",
  facet: null,
  sortable: false,
  absoluteSort: false,
  searchable: false,
  searchIndexed: false,
  key: null,
  valueType: null,
  recordValue: "any",
  valueAt: () => null,
  writer: (_spec, rows) => jsonWriter(rows),
  // the records hold its text as it is: nothing to sort or index
  buildWork: (converted) => (converted as JsonColumn).texts.bytes.length,
  partitionValues: null,
  convert: convertJson,
  getFormDoc: () => null,
  filterTypes: [],
  parts: () => [],
  build: (spec) => emptyStoredColumn(spec, false),
  literals: (_spec, converted) => (converted as JsonColumn).texts,
  // work that throws when first run, as the other kinds' would for a test they do not take
  *evaluate(column) {
    throw new Error(`json column "${column.spec.id}" is not filtered`);
  },
  work: () => 0,
  estimate: () => 0,
  passingRanks: null,
  valueTest: (spec) => {
    throw new Error(`json column "${spec.id}" is not filtered`);
  },
  getFilter: (spec) => `column "${spec.id}" is json: it is returned, never filtered`,
  dayInterval: null,
  setValue: (spec) => ({ reason: `column "${spec.id}" is json: it is returned, never filtered` }),
  valueJson: null,
  format: null,
  jsonSchema: () => ({}),
  claimValue: () => null,
  claimForm: "nothing: a json column is never filtered",
  example: () => "",
  postgresValue: (text) => JSON.parse(text),
  // json, jsonb
  postgresTypes: [114, 3802],
};
