/**
 * The default data's user record: the four fields every generated user has (the embedded default
 * dataset, test and benchmark data). Nothing outside src/generate treats these fields specially:
 * the service reads them as any table's columns (docs/api.md "Any users table: the schema").
 */
import type { ColumnSpec } from "../schema/kinds.ts";

/** One generated user: the default data's four fields. */
export interface UserRecord {
  /** A finite number, unique across the dataset: the key. */
  id: number;
  name: string;
  email: string;
  /** One of {@link STATUS_VALUES}. */
  status: Status;
}

/** The values of the generated users' `status`, in collation order. */
export const STATUS_VALUES = ["active", "inactive"] as const;

/** A generated user's status. */
export type Status = (typeof STATUS_VALUES)[number];

/** The generated users' key column. */
export const USER_KEY = "id";

/**
 * The generated users' columns and kinds, in record order: what inference finds on the default
 * data (`status` an enum of its two values in collation order), declared so that a table of a
 * few generated users has the same kinds as a large one.
 */
export const USER_COLUMN_SPECS: readonly ColumnSpec[] = [
  { id: "id", kind: "number" },
  { id: "name", kind: "text" },
  { id: "email", kind: "text" },
  { id: "status", kind: "enum", values: [...STATUS_VALUES] },
];
