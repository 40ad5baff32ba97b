/**
 * The user record and its columns, as the seed document (part 2) defines them and
 * docs/api.md ("Columns") names them.
 */

/** One user record: the four fields of the seed's "User record" table. */
export interface UserRecord {
  /** A finite number, unique across the dataset. */
  id: number;
  name: string;
  email: string;
  /** One of {@link STATUS_VALUES}. */
  status: Status;
}

/** The enum values of `status`, in collation order; a row stores the index (its status code, 0 or 1). */
export const STATUS_VALUES = ["active", "inactive"] as const;

/** Every status code as a mask (bit c = code c): a status filter that keeps all rows. */
export const ALL_STATUS = (1 << STATUS_VALUES.length) - 1;

/** The status code of a mask with exactly one bit set (bit c = code c), or -1 for any other mask. */
export function singleStatus(mask: number): number {
  return mask !== 0 && (mask & (mask - 1)) === 0 ? 31 - Math.clz32(mask) : -1;
}

/** A status value. */
export type Status = (typeof STATUS_VALUES)[number];

/** The column ids, exactly as docs/api.md names them. */
export const COLUMN_IDS = ["id", "name", "email", "status"] as const;

/** A column id. */
export type ColumnId = (typeof COLUMN_IDS)[number];

/** The string columns: stored as UTF-8 bytes plus offsets, with folded copies for matching. */
export const STRING_COLUMNS = ["name", "email"] as const;

/** A string column id. */
export type StringColumnId = (typeof STRING_COLUMNS)[number];

/** True when `value` is one of {@link COLUMN_IDS}. */
export function isColumnId(value: unknown): value is ColumnId {
  return typeof value === "string" && (COLUMN_IDS as readonly string[]).includes(value);
}

/**
 * The status code of a status value, or -1 when it is not in the enum. Case-insensitive,
 * as docs/api.md ("Matching") says `status` matches whole values case-insensitively.
 */
export function statusCode(value: string): number {
  const lower = value.toLowerCase();
  for (let code = 0; code < STATUS_VALUES.length; code++) {
    if (STATUS_VALUES[code] === lower) return code;
  }
  return -1;
}
