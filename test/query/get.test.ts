import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { ProblemError } from "../../src/query/errors.ts";
import { SEED_SCHEMA } from "../support/table-store.ts";
import { parseGetQuery, queryPairs } from "../../src/query/get.ts";

describe("parseGetQuery", () => {
  test("defaults", () => {
    expect(parseGetQuery("", 1000, SEED_SCHEMA)).toEqual({ query: { filter: null, sort: [], offset: 0, limit: 10 }, page: 1, pageSize: 10, meta: {} });
  });

  test("TanStack's request, percent-encoded brackets, + for spaces", () => {
    const r = parseGetQuery("page=3&pageSize=20&sortBy=email&sortOrder=DESC&filter%5Bname%5D=mary+ann&filter%5Bid%5D=10,50", 1000, SEED_SCHEMA);
    expect(r.query).toEqual({
      filter: {
        kind: "and",
        children: [
          { kind: "column", column: "name", test: { op: "text", type: "contains", value: "mary ann" } },
          { kind: "column", column: "id", test: { op: "range", lo: 10, loOpen: false, hi: 50, hiOpen: false, negate: false } },
        ],
      },
      sort: [{ column: "email", direction: "desc", absolute: false }],
      offset: 40,
      limit: 20,
    });
    expect(r.meta).toEqual({ sortBy: "email", sortOrder: "desc", filters: { name: "mary ann", id: "10,50" } });
  });

  test("enum lists normalize to enum order", () => {
    const r = parseGetQuery("filter[status]=Inactive,ACTIVE,", 1000, SEED_SCHEMA);
    expect(r.query.filter).toEqual({ kind: "column", column: "status", test: { op: "set", values: ["active", "inactive"], nulls: false } });
    expect(r.meta.filters).toEqual({ status: "active,inactive" });
  });

  test("every bad parameter is listed at once", () => {
    try {
      parseGetQuery("page=0&pageSize=2000&sortBy=x&order=sideways&filter[id]=1,x", 1000, SEED_SCHEMA);
      throw new Error("no error");
    } catch (error) {
      expect(error).toBeInstanceOf(ProblemError);
      const e = error as ProblemError;
      expect(e.code).toBe("BAD_PARAMETER");
      expect(e.errors.map((x) => ("parameter" in x ? x.parameter : ""))).toEqual(["page", "pageSize", "sortBy", "order", "filter[id]"]);
    }
  });
});

describe("queryPairs", () => {
  const pairsOf = (search: string) => [...new URLSearchParams(search)].flat();

  test("literal cases decode as URLSearchParams does", () => {
    const cases = [
      "",
      "?",
      "?a=1",
      "a=1&&b=&c&=d&a=2",
      "filter%5Bname%5D=mary+ann&x=%2B%20%3D%26",
      "a=b=c&%=%&%zz=%4&%e9=%C3%A9&%F0%9F%98%80=%ED%A0%80",
      "caf\u00e9=\u00fc+%C3",
    ];
    for (const search of cases) expect(queryPairs(search)).toEqual(pairsOf(search));
  });

  test("any string decodes as URLSearchParams does", () => {
    const alphabet = fc.constantFrom("a", "Z", "0", "9", "f", "F", "%", "+", "&", "=", "?", "[", "]", " ", "\u00e9", "%C3", "%A9", "%E2%82", "%AC", "%FF", "%2", "%5B");
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 30 }), (parts) => {
        const search = parts.join("");
        expect(queryPairs(search)).toEqual(pairsOf(search));
      }),
      { numRuns: 2000 },
    );
  });
});
