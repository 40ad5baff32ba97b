/**
 * A least-recently-used cache bounded by bytes: what keeps the engine's filter match sets,
 * ordered match lists and walk checkpoints (so that AG Grid's following blocks of one query cost
 * O(block)), and access control's role views and verified tokens, each within its budget. Below
 * both: it knows nothing of what it holds.
 */

/** One cached value and its size. */
interface Entry<V> {
  value: V;
  /** Approximate retained size, in bytes. */
  bytes: number;
}

/** An LRU map from string keys to values, evicting the least recently used past `maxBytes`. */
export class ByteLru<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private used = 0;
  /** Lookups by {@link get} that found their key, since creation (read by the metrics endpoint). */
  hits = 0;
  /** Lookups by {@link get} that did not find their key, since creation. */
  misses = 0;

  /** @param maxBytes the budget, in bytes; a value larger than it is not kept. */
  constructor(readonly maxBytes: number) {}

  /** The value for `key`, marking it most recently used; undefined when absent. Counts a hit or a miss. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** The value for `key` without marking it used (its recency is left as it is); undefined when absent. */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** True when `key` is cached (its recency is left as it is). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Stores `value` under `key` with its size in bytes, evicting old entries as needed. */
  set(key: string, value: V, bytes: number): void {
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.used -= old.bytes;
      this.entries.delete(key);
    }
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { value, bytes });
    this.used += bytes;
    for (const [k, e] of this.entries) {
      if (this.used <= this.maxBytes) break;
      this.entries.delete(k);
      this.used -= e.bytes;
    }
  }

  /** Drops the entry of `key`, if any. */
  delete(key: string): void {
    const old = this.entries.get(key);
    if (old === undefined) return;
    this.used -= old.bytes;
    this.entries.delete(key);
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.used;
  }

  /** Entries held now. */
  get size(): number {
    return this.entries.size;
  }

  /** The entries held now, least recently used first, as `[key, value]` (their recency left as it is). */
  *entriesNow(): Generator<[string, V]> {
    for (const [key, entry] of this.entries) yield [key, entry.value];
  }

  /** Drops every entry. */
  clear(): void {
    this.entries.clear();
    this.used = 0;
  }
}
