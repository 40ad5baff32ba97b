/**
 * Conditional requests over the data (docs/api.md "HTTP envelope", Conditional GET): an entity
 * tag computed from the snapshot id and the normalized request before the query runs, and the
 * `If-None-Match` test (RFC 9110 §13.1.2, weak comparison).
 */
import type { Coding } from "./compress.ts";

/** Content codings as numbers, for the tag. */
const CODING_NUMBER: Record<Coding, number> = { zstd: 1, gzip: 2, br: 3 };

/** Odd multipliers of the two hash lanes (golden ratio and murmur3's constants). */
const M_A = 0x9e3779b1;
const M_B = 0x85ebca77;

/**
 * Mixes the number `n` (a safe integer) into the 32-bit state `h`, one-to-one in `n` below
 * 2^32 for a given `h`: xor, multiply by an odd constant, xorshift.
 */
function mix(h: number, n: number, m: number): number {
  h = Math.imul(h ^ (n >>> 0), m);
  h = Math.imul(h ^ Math.floor(n / 4294967296), m);
  return h ^ (h >>> 15);
}

/** The snapshot id {@link seedsA} and {@link seedsB} were computed for. */
let seededFor = "";
/** Per coding number, the two lanes' hashes of {@link seededFor}: computed once per snapshot. */
const seedsA = new Int32Array(4);
const seedsB = new Int32Array(4);

/**
 * The entity tag of a data response: `"<lane A>-<lane B>"`, two independent 32-bit hashes in
 * base 36 (xxHash32 and CRC-32 from Bun.hash, seeded with the snapshot id and the content
 * coding, the numbers mixed in by multiplication): 64 bits of the snapshot id, the coding and
 * the normalized request. The body of a data response is a function of these alone, so equal
 * tags mean byte-equal bodies: a strong validator (RFC 9110 §8.8.3; the coding is part of it
 * because a strong tag names one representation, and gzip and identity bodies differ). The
 * same in every process serving the snapshot (a fleet of replicas agrees). Computed without
 * running the query, and without joining strings: hashing the parts where they are costs less
 * than building one key (measured: a joined key and a hex tag cost about 5% of a cheap
 * request's throughput).
 * @param snapshotId the served snapshot's id (changes on every reload to other data)
 * @param coding the negotiated content coding, or null for none
 * @param route a number per route and method: each body shape its own tags
 * @param a the first number of the request (GET: the page; POST: the first row)
 * @param b the second number of the request (GET: the page size; POST: the rows)
 * @param text the rest of the request as a string (GET: the echoed `meta` JSON; POST: the sort keys)
 * @param filterKey the filter's cache key (engine/execute.ts `filterCacheKey`), or ""
 * @param viewTag with access control, the role's view's tag (access/view.ts `RoleView.tag`: the
 *   policy, the role and the claims its filter reads), so that a 304 never crosses roles or
 *   tenants (docs/api.md "Access control"); "" without
 */
export function entityTag(snapshotId: string, coding: Coding | null, route: number, a: number, b: number, text: string, filterKey: string, viewTag = ""): string {
  if (snapshotId !== seededFor) {
    for (let c = 0; c < 4; c++) {
      seedsA[c] = Bun.hash.xxHash32(snapshotId, c);
      seedsB[c] = Bun.hash.crc32(snapshotId, c);
    }
    seededFor = snapshotId;
  }
  const c = coding === null ? 0 : CODING_NUMBER[coding];
  let ha = mix(mix(mix(seedsA[c], route, M_A), a, M_A), b, M_A);
  let hb = mix(mix(mix(seedsB[c], route, M_B), a, M_B), b, M_B);
  ha = Bun.hash.xxHash32(text, ha >>> 0);
  hb = Bun.hash.crc32(text, hb >>> 0);
  if (filterKey !== "") {
    ha = Bun.hash.xxHash32(filterKey, ha);
    hb = Bun.hash.crc32(filterKey, hb);
  }
  if (viewTag !== "") {
    // the request's parts hashed first, then the view's: "" is no view (a role's tag is never empty)
    ha = Bun.hash.xxHash32(viewTag, ha ^ M_A);
    hb = Bun.hash.crc32(viewTag, hb ^ M_B);
  }
  return `"${ha.toString(36)}-${hb.toString(36)}"`;
}

/** Character codes the tag list scanner looks for (RFC 9110 §8.8.3 entity-tag grammar). */
const QUOTE = 34; // '"'
const COMMA = 44; // ','
const SPACE = 32;
const TAB = 9;

/**
 * True when `If-None-Match` matches `tag`, so a GET or HEAD answers 304 (RFC 9110 §13.1.2):
 * `*`, or a list of entity tags one of which equals `tag` by weak comparison (`W/"x"` matches
 * `"x"`; the opaque parts compare byte for byte). A malformed list matches nothing.
 * @param header the `If-None-Match` value
 * @param tag this response's entity tag, quoted (from {@link entityTag})
 */
export function ifNoneMatchHits(header: string, tag: string): boolean {
  if (header === tag) return true;
  const n = header.length;
  let i = 0;
  while (i < n) {
    const c = header.charCodeAt(i);
    if (c === SPACE || c === TAB || c === COMMA) {
      i++;
      continue;
    }
    if (c === 42 /* '*' */) return true;
    let start = i;
    if (c === 87 /* 'W' */ && header.charCodeAt(i + 1) === 47 /* '/' */) start = i + 2;
    if (header.charCodeAt(start) !== QUOTE) return false;
    const end = header.indexOf('"', start + 1);
    if (end < 0) return false;
    if (end + 1 - start === tag.length && header.startsWith(tag, start)) return true;
    i = end + 1;
  }
  return false;
}
