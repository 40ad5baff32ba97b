/**
 * The snapshot file format, version 8 (docs/snapshot-format.md): an 8-byte magic, a 32-bit
 * header length and CRC-32, a msgpackr header, then 8-byte-aligned binary sections that the
 * loader views in place out of a memory map.
 */
import { Packr } from "msgpackr";
import type { Schema } from "../schema/kinds.ts";

/** File magic: "USERSNAP" in ASCII. */
export const MAGIC = new Uint8Array([0x55, 0x53, 0x45, 0x52, 0x53, 0x4e, 0x41, 0x50]);

/** The format version this build writes and reads. */
export const FORMAT_VERSION = 8;

/** Fixed prefix before the header: magic (8) + header length u32 (4) + header CRC-32 u32 (4), in bytes. */
export const PREFIX_BYTES = 16;

/** Section alignment, in bytes: every section starts at a multiple of 8 from the file start. */
export const SECTION_ALIGN = 8;

/** Element types of sections and their sizes in bytes. */
export const ELEMENT_BYTES = { u8: 1, u32: 4, f64: 8 } as const;

/** A section's element type. */
export type ElementType = keyof typeof ELEMENT_BYTES;

/** One section's entry in the header. */
export interface SectionEntry {
  /** Section name, e.g. `ids` or `name.rowsByValue`. */
  name: string;
  type: ElementType;
  /** Byte offset from the file start; a multiple of {@link SECTION_ALIGN}. */
  offset: number;
  /** Number of elements. */
  length: number;
  /** xxHash3 of the section's bytes, as 16 hex digits. */
  hash: string;
}

/** The msgpackr header, decoded. */
export interface SnapshotHeader {
  format: "users-listing-snapshot";
  formatVersion: number;
  /** ISO 8601 time of the build. */
  createdAt: string;
  rowCount: number;
  /** Rows per records chunk, as a power of two (store/types.ts `Records`); sections `records.<c>`. */
  recordChunkShift: number;
  /** The snapshot's schema (docs/api.md "Any users table: the schema"): the columns in order, the key, the partition column. */
  schema: Schema;
  /** The collation the permutations were built with, and the ICU version that built them. */
  collation: { locale: string; sensitivity: string; numeric: boolean; icu: string };
  /** Sections in file order. */
  sections: SectionEntry[];
  /** xxHash3 over the sections' hashes, 16 hex digits: the snapshot id. */
  checksum: string;
}

/**
 * The msgpackr instance for headers. `useRecords: false` keeps plain maps (no record
 * extension), `moreTypes: true` round-trips typed arrays should any reach it.
 */
export const headerPackr = new Packr({ useRecords: false, moreTypes: true });

/**
 * Name of the section holding `part` of column `id`: `col.<id>.<part>`. Which parts a column has
 * is its kind's and role's (src/kinds: `KINDS[kind].parts`, element types in kind.ts `PART_TYPES`),
 * plus the optional ones its data called for.
 */
export function columnSectionName(id: string, part: string): string {
  return `col.${id}.${part}`;
}

/** Name of the section holding records chunk `c` (store/types.ts `Records`). */
export function recordChunkName(c: number): string {
  return `records.${c}`;
}

/** The fields of a posting-list index (trigram-index.ts `TrigramIndex`), in section order. */
export const INDEX_FIELDS = ["keys", "counts", "groupCounts", "refs", "bitmaps", "gaps"] as const;

/** The element type of each field of a posting-list index. */
export const INDEX_FIELD_TYPES = { keys: "f64", counts: "u32", groupCounts: "u32", refs: "u32", bitmaps: "u32", gaps: "u8" } as const;

/**
 * Name of the section holding `field` of the search index's lists of n-grams of `n` code points
 * (store/types.ts `SearchIndex`): `search.<n>.<field>`.
 */
export function searchSectionName(n: number, field: (typeof INDEX_FIELDS)[number]): string {
  return `search.${n}.${field}`;
}

/**
 * Name of the section holding `field` of column `id`'s own lists of n-grams of `n` code points
 * (n = 1 or 2; store/types.ts `SearchIndex.columns`): `col.<id>.search.<n>.<field>`.
 */
export function columnSearchSectionName(id: string, n: 1 | 2, field: (typeof INDEX_FIELDS)[number]): string {
  return `col.${id}.search.${n}.${field}`;
}

/** Sections of the partition (store/types.ts `Partition`): each row's code, and the rows per code. */
export const PARTITION_CODES_SECTION = "partition.codes";
export const PARTITION_COUNTS_SECTION = "partition.counts";

/** xxHash3 of bytes as 16 lower-case hex digits. */
export function hashBytes(bytes: Uint8Array): string {
  return Bun.hash.xxHash3(bytes).toString(16).padStart(16, "0");
}

/** Rounds a byte count up to the section alignment. */
export function alignUp(bytes: number): number {
  return Math.ceil(bytes / SECTION_ALIGN) * SECTION_ALIGN;
}
