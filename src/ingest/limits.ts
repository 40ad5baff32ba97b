/**
 * The limits every input is held to (docs/api.md "Any users table: from your data to columns", limits): beyond them a build
 * stops with `file:line: reason`, before the work or the memory grows with them.
 */

/**
 * Most bytes one value may take (1 MiB): a string's UTF-8 bytes, a CSV field's, an object's or
 * array's JSON text. Every record of a page is served whole, so one huge value would make every
 * page that shows it as large.
 */
export const MAX_VALUE_BYTES = 1 << 20;

/** Most columns a table may keep (excluded fields are not counted). Each column costs its own indexes. */
export const MAX_COLUMNS = 512;
