/**
 * The JSON schemas of AG Grid's filter models, as the OpenAPI document names them
 * (http/declarations.ts), made from the operator registry and the kind modules rather than
 * written beside them: a schema per filter type
 * (`TextFilterModel`, …) whose `type` enum is the operator's types (kinds/operators.ts
 * `OPERATORS`), a schema per column kind (`NumberColumnFilterModel`, …) offering exactly the
 * filter types the kind takes (kinds/kind.ts `filterTypes`), and the `FilterModel` of the served
 * schema, each column's entry its kind's. A new operator or filter type fails to compile here
 * until its operands are described in {@link OPERANDS}.
 */
import type { FilterType } from "../kinds/kind.ts";
import { MAX_FILTER_LENGTH, OPERATORS } from "../kinds/operators.ts";
import { KINDS } from "../kinds/registry.ts";
import { MAX_CONDITIONS_PER_COLUMN, MAX_PREDICATES } from "../query/post.ts";
import type { ColumnKind, Schema } from "../schema/kinds.ts";

/** A JSON Schema object of the document. */
type JsonSchema = Record<string, unknown>;

/** A `$ref` to a named schema. */
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** `number` → `Number`, `datetime` → `Datetime`. */
function pascal(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** The component name of a filter type's model: `TextFilterModel`, `SetFilterModel`, … */
export function filterModelName(filterType: FilterType): string {
  return `${pascal(filterType)}FilterModel`;
}

/** The component name of the filter models a column kind takes: `TextColumnFilterModel`, `DatetimeColumnFilterModel`, … */
export function kindFilterModelName(kind: ColumnKind): string {
  return `${pascal(kind)}ColumnFilterModel`;
}

/**
 * What the operator registry cannot say of itself: what a filter type compares, and the fields
 * of its model besides `filterType` and `type` (docs/api.md "Filter model").
 */
const OPERANDS: Record<FilterType, { description: string; required: string[]; properties: Record<string, JsonSchema> }> = {
  text: {
    description:
      "AG Grid text filter. Compares folded strings (NFKD, marks removed, lower case; the input is not trimmed) of the value's output string (numbers as `String(n)`, dates as `YYYY-MM-DD`, date-times as ISO 8601 UTC, booleans as `true`/`false`). `blank` matches empty or white-space values; null passes only `notEqual`, `notContains` and `blank`.",
    required: [],
    properties: {
      filter: { type: ["string", "number", "null"], maxLength: MAX_FILTER_LENGTH, description: "Needed by every type but `blank` and `notBlank`." },
      filterTo: { type: ["string", "null"], description: "Sent by AG Grid; unused by text filters." },
    },
  },
  number: {
    description: "AG Grid number filter. `inRange` is exclusive at both ends; null passes only `blank`.",
    required: [],
    properties: {
      filter: { type: ["number", "string", "null"], description: "A number, or a numeric string (coerced). Needed by every type but `blank` and `notBlank`." },
      filterTo: { type: ["number", "string", "null"], description: "The upper bound of `inRange`." },
    },
  },
  date: {
    description: "AG Grid date filter: compares UTC calendar days (`inRange` strictly between the two days); null passes only `blank`.",
    required: [],
    properties: {
      dateFrom: {
        type: ["string", "null"],
        maxLength: MAX_FILTER_LENGTH,
        description: "A day: `2024-03-01 00:00:00` (AG Grid's form), `2024-03-01` or an ISO 8601 date-time. Needed by every type but `blank` and `notBlank`.",
      },
      dateTo: { type: ["string", "null"], maxLength: MAX_FILTER_LENGTH, description: "The upper day of `inRange`." },
    },
  },
  set: {
    description:
      "AG Grid set filter: the value equals one of `values` (whole values, folded; numbers compared as numbers; a value an enum or boolean column cannot hold is a 400). `null` stands for null (and, on text columns, blank) values. An empty list matches nothing.",
    required: ["values"],
    properties: {
      values: { type: "array", items: { type: ["string", "number", "boolean", "null"], maxLength: MAX_FILTER_LENGTH } },
    },
  },
};

/** Every filter type, in the registry's order. */
function filterTypes(): FilterType[] {
  return Object.keys(OPERATORS) as FilterType[];
}

/** The kinds that take `filterType`, for its description. */
function kindsTaking(filterType: FilterType): ColumnKind[] {
  return (Object.keys(KINDS) as ColumnKind[]).filter((kind) => KINDS[kind].filterTypes.includes(filterType));
}

/** The model of one filter type: `filterType`, the operator's `type`s (the first the default) and its operands. */
function simpleModel(filterType: FilterType): JsonSchema {
  const operands = OPERANDS[filterType];
  const types = OPERATORS[filterType].types;
  const properties: Record<string, JsonSchema> = { filterType: { type: "string", enum: [filterType] } };
  if (types.length > 0) properties.type = { type: ["string", "null"], enum: [...types, null], description: `Default (absent or null): \`${types[0]}\`.` };
  Object.assign(properties, operands.properties);
  return {
    type: "object",
    description: `${operands.description} Taken by ${kindsTaking(filterType).join(", ")} columns.`,
    required: ["filterType", ...operands.required],
    additionalProperties: false,
    properties,
  };
}

/** A combined model whose conditions are models of `types`: one column's conditions joined with AND or OR. */
function combinedModel(types: readonly FilterType[], description: string): JsonSchema {
  const conditions = types.map((t) => ref(filterModelName(t)));
  return {
    type: "object",
    description,
    required: ["operator", "conditions"],
    additionalProperties: false,
    properties: {
      filterType: { type: "string", enum: [...types], description: "Each condition's filterType must equal it (a condition without one takes it)." },
      operator: { type: "string", enum: ["AND", "OR"] },
      conditions: { type: "array", minItems: 1, maxItems: MAX_CONDITIONS_PER_COLUMN, items: conditions.length === 1 ? conditions[0] : { oneOf: conditions } },
    },
  };
}

/**
 * The filter-model schemas (`components.schemas`) of a snapshot's schema:
 * - `<Type>FilterModel` per filter type of the registry, `CombinedFilterModel` and
 *   `ColumnFilterModel` (any of them, whatever the column);
 * - `<Kind>ColumnFilterModel` per filterable kind among the schema's columns: the filter types
 *   that kind takes, alone or combined;
 * - `FilterModel`: a property per filterable column (its kind's model, or null), nothing else.
 */
export function filterModelSchemas(schema: Schema): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  const all = filterTypes();
  for (const filterType of all) out[filterModelName(filterType)] = simpleModel(filterType);
  out.CombinedFilterModel = combinedModel(all, `AG Grid combined filter: one column's conditions joined with AND or OR; at most ${MAX_CONDITIONS_PER_COLUMN} conditions.`);
  out.ColumnFilterModel = {
    description: "A filter model of any filter type, simple or combined. Which of them a column takes is its kind's (the `<Kind>ColumnFilterModel` schemas); any other is a 400.",
    oneOf: [...all.map((t) => ref(filterModelName(t))), ref("CombinedFilterModel")],
  };
  const filterable = schema.columns.filter((c) => KINDS[c.kind].filterTypes.length > 0);
  for (const kind of new Set(filterable.map((c) => c.kind))) {
    const types = KINDS[kind].filterTypes;
    out[kindFilterModelName(kind)] = {
      description: `A filter model on a ${kind} column: ${types.join(", ")}, or a combination of them. Any other filter type is a 400 naming the column.`,
      oneOf: [...types.map((t) => ref(filterModelName(t))), combinedModel(types, `${types.join(" or ")} conditions on one ${kind} column joined with AND or OR; at most ${MAX_CONDITIONS_PER_COLUMN}.`)],
    };
  }
  out.FilterModel = {
    type: "object",
    description: `AG Grid's filterModel: a filter model per column, all ANDed; a null column is no filter. At most ${MAX_PREDICATES} conditions in all.`,
    additionalProperties: false,
    properties: Object.fromEntries(filterable.map((c) => [c.id, { oneOf: [ref(kindFilterModelName(c.kind)), { type: "null" }] }])),
  };
  return out;
}
