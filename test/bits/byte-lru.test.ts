import { describe, expect, test } from "bun:test";
import { ByteLru } from "../../src/bits/byte-lru.ts";

describe("ByteLru", () => {
  test("evicts the least recently used past the byte budget", () => {
    const lru = new ByteLru<string>(100);
    lru.set("a", "A", 40);
    lru.set("b", "B", 40);
    expect(lru.get("a")).toBe("A"); // a is now the most recent
    lru.set("c", "C", 40); // evicts b
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBe("A");
    expect(lru.get("c")).toBe("C");
    expect(lru.bytes).toBe(80);
    expect(lru.size).toBe(2);
  });

  test("replacing a key updates its size; an oversized value is not kept", () => {
    const lru = new ByteLru<number>(100);
    lru.set("a", 1, 60);
    lru.set("a", 2, 10);
    expect(lru.bytes).toBe(10);
    lru.set("big", 3, 101);
    expect(lru.get("big")).toBeUndefined();
    expect(lru.get("a")).toBe(2);
    lru.clear();
    expect(lru.size).toBe(0);
  });
});
