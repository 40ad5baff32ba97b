import { describe, expect, test } from "bun:test";
import { countBelow, sortedHas } from "../../src/bits/sorted-rows.ts";

describe("countBelow", () => {
  const rows = Uint32Array.of(2, 5, 5, 9);
  test("counts the entries below x", () => {
    expect([0, 2, 3, 5, 6, 9, 10].map((x) => countBelow(rows, x))).toEqual([0, 0, 1, 1, 3, 3, 4]);
  });
  test("an empty list has nothing below", () => {
    expect(countBelow(new Uint32Array(0), 7)).toBe(0);
  });
});

describe("sortedHas", () => {
  const rows = Uint32Array.of(1, 4, 8, 4294967295);
  test("finds exactly the rows held", () => {
    expect([0, 1, 3, 4, 8, 9, 4294967295].map((r) => sortedHas(rows, r))).toEqual([false, true, false, true, true, false, true]);
  });
  test("an empty list holds nothing", () => {
    expect(sortedHas(new Uint32Array(0), 0)).toBe(false);
  });
});
