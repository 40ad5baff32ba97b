/**
 * The `json` kind (docs/api.md "Any users table"): any JSON value, kept and returned as
 * given; never sorted or filtered (a sort or filter on it is a 400), so the store keeps nothing
 * for it but its text in the records.
 */
import { type ConvertedColumn, convertJson } from "./convert.ts";
import { type KindModule, emptyStoredColumn } from "./kind.ts";

/** The `json` kind. */
export const JSON_KIND: KindModule = {
  kind: "json",
  facet: null,
  sortable: false,
  searchable: false,
  keyKind: false,
  convert: convertJson,
  getFormDoc: () => null,
  filterTypes: [],
  parts: () => [],
  build: (spec) => emptyStoredColumn(spec, false),
  literals: (_spec, converted) => (converted as Extract<ConvertedColumn, { kind: "json" }>).texts,
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
  // json, jsonb
  postgresTypes: [114, 3802],
};
