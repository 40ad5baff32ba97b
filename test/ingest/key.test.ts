/**
 * The key column as the readers see it (src/ingest/key.ts): the reason a duplicate is reported
 * with, and the duplicate a reader reports before the key's kind is decided.
 */
import { describe, expect, test } from "bun:test";
import { duplicateKeyReason, rawKeyDuplicate } from "../../src/ingest/key.ts";
import { addJsonValue, addTextValue, rawColumn } from "../../src/ingest/raw-column.ts";

describe("the key as the readers see it", () => {
  test("reasons: a number as written, a text quoted", () => {
    expect(duplicateKeyReason(42, 7)).toBe("duplicate key 42 (first seen on line 7)");
    expect(duplicateKeyReason("a0ee", 3)).toBe('duplicate key "a0ee" (first seen on line 3)');
  });

  test("a raw key column: by number when every value so far is one (CSV text parsed), else by string", () => {
    const json = rawColumn("id");
    for (const v of [3, 1, 2, 1]) addJsonValue(json, v);
    expect(rawKeyDuplicate(json, 4)).toEqual({ duplicate: { index: 3, firstIndex: 1 }, value: 1 });
    expect(rawKeyDuplicate(json, 3)).toBeNull();
    const csv = rawColumn("id");
    for (const v of ["1e3", "7", "1000"]) addTextValue(csv, v);
    expect(rawKeyDuplicate(csv, 3)).toEqual({ duplicate: { index: 2, firstIndex: 0 }, value: 1000 });
    const text = rawColumn("k");
    for (const v of ["a", 1, null, "a"]) addJsonValue(text, v);
    expect(rawKeyDuplicate(text, 4)).toEqual({ duplicate: { index: 3, firstIndex: 0 }, value: "a" });
    const nulls = rawColumn("k");
    for (const v of [null, null, "b"]) addJsonValue(nulls, v);
    expect(rawKeyDuplicate(nulls, 3)).toBeNull();
  });
});
