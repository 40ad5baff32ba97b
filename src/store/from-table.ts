/**
 * A bridge from a {@link TableInput} (any table: every column of its kind, one key) to the
 * store build's {@link InputColumns} (the seed's four columns, then the others), for the store
 * of today, which holds the four as columns of their own. It takes a table that has the four:
 * the key `id` (number), `name` and `email` (text; an enum of strings is taken as its strings;
 * null is ""), `status` (an enum or text whose values are `active` and `inactive` in any case,
 * never null); every other column goes to `extra` in table order.
 */
import { type ByteColumn, packStrings, stringAt } from "../bits/byte-column.ts";
import type { ConvertedColumn } from "../kinds/convert.ts";
import { statusCode, STATUS_VALUES } from "../schema.ts";
import type { ExtraInput, InputColumns } from "./build.ts";
import type { TableInput } from "./input.ts";

/** The seed's four column ids, which this store holds apart from the others. */
const SEED_IDS = ["id", "name", "email", "status"];

/** Why a table cannot go into this store: a message that names the column and what it needs. */
function refuse(reason: string): never {
  throw new Error(`this build holds tables with the columns id (number key), name, email (text) and status (active/inactive): ${reason}`);
}

/** A text or enum column's values as strings (null as ""), packed; n values. */
function stringsOf(id: string, values: ConvertedColumn, n: number): ByteColumn {
  if (values.kind === "text") return values.strings;
  if (values.kind === "enum") {
    const { codes, values: names } = values;
    return packStrings(n, (row) => (codes[row] === 0 ? "" : names[codes[row] - 1]));
  }
  return refuse(`"${id}" is ${values.kind}, not text`);
}

/** The status codes (indexes into STATUS_VALUES) of an enum or text column of active/inactive, any case. */
function statusCodesOf(values: ConvertedColumn, n: number): Uint8Array {
  const codes = new Uint8Array(n);
  const codeOf = (text: string, row: number): number => {
    const code = statusCode(text);
    if (code < 0) refuse(`status of row ${row + 1} is ${JSON.stringify(text)}, not one of ${STATUS_VALUES.join(", ")}`);
    return code;
  };
  if (values.kind === "enum") {
    const byCode = values.values.map((v, i) => codeOf(v, i));
    for (let row = 0; row < n; row++) {
      if (values.codes[row] === 0) refuse(`status of row ${row + 1} is null`);
      codes[row] = byCode[values.codes[row] - 1];
    }
  } else if (values.kind === "text") {
    for (let row = 0; row < n; row++) {
      if (values.isNull[row] !== 0) refuse(`status of row ${row + 1} is null`);
      codes[row] = codeOf(stringAt(values.strings, row), row);
    }
  } else refuse(`status is ${values.kind}, not an enum`);
  return codes;
}

/**
 * The store build's input for a table that has the seed's four columns (see the module comment).
 * @returns ids, names, emails and status codes of n rows in table order, and the other columns
 *   as `extra` in table order (their arrays shared with the table)
 * @throws Error naming the column when the table lacks one of the four, its key is not a number
 *   `id`, a column of the four has another kind, or a status is null or not active/inactive
 */
export function legacyInputOf(table: TableInput): InputColumns {
  const n = table.rows;
  const byId = new Map(table.columns.map((c) => [c.spec.id, c]));
  if (table.key !== "id") refuse(`the key is "${table.key}", not "id"`);
  for (const id of SEED_IDS) if (!byId.has(id)) refuse(`the table has no "${id}" column`);
  const id = byId.get("id")?.values as ConvertedColumn;
  if (id.kind !== "number") refuse(`the key "id" is ${id.kind}, not a number`);
  const extra: ExtraInput[] = [];
  for (const column of table.columns) {
    if (SEED_IDS.includes(column.spec.id)) continue;
    extra.push({ spec: column.spec, column: column.values });
  }
  return {
    ids: id.values,
    names: stringsOf("name", byId.get("name")?.values as ConvertedColumn, n),
    emails: stringsOf("email", byId.get("email")?.values as ConvertedColumn, n),
    statusCodes: statusCodesOf(byId.get("status")?.values as ConvertedColumn, n),
    extra,
  };
}
