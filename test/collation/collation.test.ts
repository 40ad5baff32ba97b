import { describe, expect, test } from "bun:test";
import { fold } from "../../src/collation/collation.ts";

describe("fold", () => {
  test("literal cases from docs/api.md", () => {
    expect(fold("José")).toBe("jose");
    expect(fold("ALICE")).toBe("alice");
    expect(fold("Émile")).toBe("emile");
    expect(fold("ﬁle")).toBe("file");
    expect(fold("ＡＢＣ")).toBe("abc");
    expect(fold("ΟΔΟΣ")).toBe("οδος");
  });
});
