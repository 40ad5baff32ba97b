/**
 * The access policy file (docs/api.md "Access control", docs/operations.md): checked at
 * start-up against the served schema, every problem reported as `file:line: reason` — an
 * unknown column in a role, a filter model that does not fit its column's kind, an unknown claim
 * syntax, a key that is not hex SHA-256, and the rest — and a good policy read as written.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { convertClaims, findClaims, substituteClaims } from "../../src/access/claims.ts";
import { PolicyError, keyDigest, parsePolicy, readPolicy } from "../../src/access/policy.ts";
import type { Schema } from "../../src/schema/kinds.ts";

const SCHEMA: Schema = {
  columns: [
    { id: "id", kind: "number" },
    { id: "name", kind: "text" },
    { id: "email", kind: "text" },
    { id: "status", kind: "enum", values: ["active", "inactive"] },
    { id: "org_id", kind: "number" },
    { id: "signed_up", kind: "date" },
  ],
  key: "id",
  partition: "status",
};

const SECRET = "a-secret-of-at-least-thirty-two-bytes!!";
const HEX = "ab".repeat(32);

/** The problems of a policy text, or [] when it is accepted. */
function problems(text: string): string[] {
  try {
    parsePolicy(text, "policy.json", SCHEMA, { dir: tmpdir() });
    return [];
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    return error.problems;
  }
}

describe("a good policy", () => {
  test("is read as written: JWT settings, the role claim, keys by digest with their claims, roles and the claims they name", () => {
    const policy = parsePolicy(
      JSON.stringify({
        jwt: { secret: SECRET, issuer: "https://idp.example", audience: ["users-listing"] },
        roleClaim: "https://example.com/role",
        keys: [{ sha256: HEX.toUpperCase(), role: "support", claims: { org_id: 7 } }],
        roles: {
          admin: { columns: "*" },
          support: { columns: ["name", "id", "org_id"], filterModel: { org_id: { filterType: "number", type: "equals", filter: { claim: "org_id" } } } },
          orgs: { columns: ["id"], filterModel: { org_id: { filterType: "set", values: { claim: "orgs" } }, status: { filterType: "set", values: ["active", { claim: "also" }] } } },
        },
      }),
      "policy.json",
      SCHEMA,
      { dir: tmpdir() },
    );
    expect(policy.roleClaim).toBe("https://example.com/role");
    expect(policy.jwt?.algorithms).toEqual(["HS256"]);
    expect(policy.jwt?.issuer).toBe("https://idp.example");
    expect(policy.jwt?.audience).toEqual(["users-listing"]);
    expect(policy.keys).toEqual([{ digest: Buffer.from(HEX, "hex"), role: "support", claims: { org_id: 7 } }]);
    expect([...policy.roles.values()].map((r) => ({ name: r.name, columns: r.columns, claims: r.claims }))).toEqual([
      { name: "admin", columns: "*", claims: [] },
      { name: "support", columns: ["name", "id", "org_id"], claims: ["org_id"] },
      { name: "orgs", columns: ["id"], claims: ["also", "orgs"] },
    ]);
    expect(policy.id).toMatch(/^[0-9a-f]{16}$/);
  });

  test("a key's digest is the SHA-256 of its UTF-8 bytes (what sha256sum prints)", () => {
    expect(Buffer.from(keyDigest("admin-key")).toString("hex")).toBe(createHash("sha256").update("admin-key").digest("hex"));
  });
});

describe("a policy refused: each problem at its line", () => {
  test("an unknown column in a role, a column listed twice, a role without the key", () => {
    const text = `{
  "jwt": {"secret": "${SECRET}"},
  "roles": {
    "support": {"columns": ["id", "name", "salary"]},
    "twice": {"columns": ["id", "name", "name"]},
    "nokey": {"columns": ["name"]}
  }
}`;
    expect(problems(text)).toEqual([
      'policy.json:4: role "support": unknown column "salary"; the columns are id, name, email, status, org_id, signed_up',
      'policy.json:5: role "twice": column "name" is listed twice',
      'policy.json:6: role "nokey": the columns must include the key column "id" (rows are identified and ordered by it)',
    ]);
  });

  test("a filter model that does not fit its column's kind, an unknown filter type, an enum value outside the enum, an unknown column", () => {
    const text = `{
  "jwt": {"secret": "${SECRET}"},
  "roles": {
    "a": {"columns": "*", "filterModel": {
      "email": {"filterType": "number", "type": "equals", "filter": 3},
      "name": {"filterType": "fuzzy", "filter": "x"},
      "status": {"filterType": "set", "values": ["active", "zombie"]},
      "salary": {"filterType": "number", "filter": 1}
    }}
  }
}`;
    expect(problems(text)).toEqual([
      'policy.json:5: role "a": a "number" filter does not fit column "email" (text); it takes text, set: {"filterType":"number","type":"equals","filter":3}',
      'policy.json:6: role "a": a "fuzzy" filter does not fit column "name" (text); it takes text, set: {"filterType":"fuzzy","filter":"x"}',
      'policy.json:7: role "a": "zombie" is not a value of status; valid values: active, inactive',
      'policy.json:8: role "a": unknown column "salary"; valid columns: id, name, email, status, org_id, signed_up',
    ]);
  });

  test("an unknown claim syntax: a reference with other members, a name that is not a string, a claim where no value goes", () => {
    const text = `{
  "jwt": {"secret": "${SECRET}"},
  "roles": {
    "a": {"columns": "*", "filterModel": {
      "org_id": {"filterType": "number", "type": "equals", "filter": {"claim": "org_id", "default": 1}},
      "name": {"filterType": "text", "filter": {"claim": 7}},
      "email": {"filterType": "text", "type": {"claim": "t"}, "filter": "x"}
    }}
  }
}`;
    expect(problems(text)).toEqual([
      'policy.json:5: role "a": a claim reference is {"claim": "<name>"} and nothing else (got the members "claim", "default")',
      'policy.json:6: role "a": a claim reference names its claim with a string of 1 to 256 characters (got 7)',
      'policy.json:7: role "a": a claim may stand only for a filter value (filter, filterTo, dateFrom, dateTo, values, or one of the values)',
    ]);
  });

  test("a key that is not hex SHA-256; a key twice; a key of an undefined role; a key without the claims its role reads, or with values that do not fit", () => {
    const text = `{
  "jwt": {"secret": "${SECRET}"},
  "keys": [
    {"sha256": "not-a-digest", "role": "support"}
  ],
  "roles": {"support": {"columns": "*"}}
}`;
    expect(problems(text)).toEqual(["policy.json:4: \"sha256\" must be the SHA-256 of the key in hex: 64 hex digits (sha256sum, or openssl dgst -sha256)"]);
    const keys = `{
  "keys": [
    {"sha256": "${HEX}", "role": "support", "claims": {"org_id": 7}},
    {"sha256": "${HEX.toUpperCase()}", "role": "support", "claims": {"org_id": 8}},
    {"sha256": "${"cd".repeat(32)}", "role": "ghost"},
    {"sha256": "${"ef".repeat(32)}", "role": "support"},
    {"sha256": "${"01".repeat(32)}", "role": "support", "claims": {"org_id": "seven"}}
  ],
  "roles": {"support": {"columns": "*", "filterModel": {"org_id": {"filterType": "number", "type": "equals", "filter": {"claim": "org_id"}}}}}
}`;
    expect(problems(keys)).toEqual([
      "policy.json:4: key 2 has the same sha256 as key 1",
      'policy.json:5: key 3: role "ghost" is not defined in "roles" (support)',
      'policy.json:6: key 4: role "support" filters by the claim org_id, which the key\'s "claims" lacks',
      'policy.json:7: key 5: its claims do not fit role "support"\'s filter: the claim "org_id" must be a finite number or a numeric string for column "org_id" (number), not "seven"',
    ]);
  });

  test("JWT settings: neither or both of secret and jwks, a short secret, an algorithm that does not go with the key", () => {
    expect(problems(`{"jwt": {"algorithms": ["HS256"]}, "roles": {"a": {"columns": "*"}}}`)).toEqual([
      'policy.json:1: "jwt" needs "secret" (HMAC: HS256, HS384, HS512) or "jwks" (a file of public keys: RS256, ES256, …), one of them',
    ]);
    expect(problems(`{\n"jwt": {\n"secret": "short",\n"algorithms": ["HS256", "RS256", "none"]},\n"roles": {"a": {"columns": "*"}}}`)).toEqual([
      "policy.json:3: a secret must be at least 32 bytes long (it is 5): a random one, e.g. openssl rand -base64 48",
      'policy.json:4: algorithm "RS256" does not go with a "secret": use HS256, HS384, HS512',
      'policy.json:4: algorithm "none" does not go with a "secret": use HS256, HS384, HS512',
    ]);
  });

  test("the shape: unknown members, a wrong type, a policy that lets no one in, a role name out of pattern", () => {
    expect(problems(`{\n  "roles": {"a": {"columns": "*", "rows": 1}},\n  "rolez": 1\n}`)).toEqual([
      'policy.json:2: unknown member "rows"',
      'policy.json:3: unknown member "rolez" (the policy has "jwt", "roleClaim", "keys" and "roles")',
    ]);
    expect(problems(`{"roles": {"a": {"columns": "id"}}}`)).toEqual(['policy.json:1: "columns" must be "*" or a non-empty list of column ids']);
    expect(problems(`{"roles": {"a": {"columns": "*"}}}`)).toEqual(['policy.json:1: the policy lets no one in: give "jwt" (how tokens are verified), "keys", or both']);
    expect(problems(`{"jwt": {"secret": "${SECRET}"}, "roles": {"a b": {"columns": "*"}}}`)).toEqual(['policy.json:1: the role name "a b" must be 1 to 64 letters, digits, "_", ".", ":" or "-"']);
  });

  test("not JSON, a member given twice, comments: the line of the first problem", () => {
    expect(problems(`{\n  "roles": {"a": {"columns": "*"}},\n}`)).toEqual(["policy.json:3: not valid JSON: PropertyNameExpected", "policy.json:3: not valid JSON: ValueExpected"]);
    expect(problems(`{\n  "jwt": {"secret": "${SECRET}"},\n  "roles": {"a": {"columns": "*"}},\n  "roles": {"a": {"columns": ["id"]}}\n}`)).toEqual(['policy.json:4: "roles" is given twice in one object']);
    expect(problems(`{\n  // the admins\n  "roles": {}\n}`)[0]).toBe("policy.json:2: not valid JSON: InvalidCommentToken");
    expect(problems("")).toEqual(["policy.json:1: not valid JSON: ValueExpected"]);
  });

  test("a file that cannot be read", () => {
    expect(() => readPolicy("/nonexistent/policy.json", SCHEMA)).toThrow(/^\/nonexistent\/policy\.json:1: cannot read the access policy: /);
  });
});

describe("a JWKS file", () => {
  test("public RS256 and ES256 keys are read; a private key, a secret key or a missing file is refused at the jwks line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "access-jwks-"));
    try {
      const rsa = await generateKeyPair("RS256", { extractable: true });
      const ec = await generateKeyPair("ES256", { extractable: true });
      const publicKeys = { keys: [{ ...(await exportJWK(rsa.publicKey)), kid: "r1", alg: "RS256" }, { ...(await exportJWK(ec.publicKey)), kid: "e1", alg: "ES256" }] };
      writeFileSync(join(dir, "jwks.json"), JSON.stringify(publicKeys));
      writeFileSync(join(dir, "private.json"), JSON.stringify({ keys: [await exportJWK(rsa.privateKey)] }));
      writeFileSync(join(dir, "oct.json"), JSON.stringify({ keys: [{ kty: "oct", k: "c2VjcmV0" }] }));
      const policy = (jwks: string, algorithms = '["RS256", "ES256"]') => `{\n"jwt": {\n"jwks": "${jwks}", "algorithms": ${algorithms}},\n"roles": {"a": {"columns": "*"}}}`;
      const read = (text: string) => {
        writeFileSync(join(dir, "policy.json"), text);
        try {
          return readPolicy(join(dir, "policy.json"), SCHEMA);
        } catch (error) {
          return (error as PolicyError).problems.map((p) => p.replaceAll(dir, "DIR"));
        }
      };
      const ok = read(policy("jwks.json"));
      expect(Array.isArray(ok) ? ok : ok.jwt?.keys.kind).toBe("jwks");
      expect(read(policy("private.json"))).toEqual(["DIR/policy.json:3: the JWKS file DIR/private.json: key 1 is a private or secret key; give the public keys only (no \"d\", no \"oct\")"]);
      expect(read(policy("oct.json"))).toEqual(["DIR/policy.json:3: the JWKS file DIR/oct.json: key 1 is a private or secret key; give the public keys only (no \"d\", no \"oct\")"]);
      expect((read(policy("missing.json")) as string[])[0]).toStartWith("DIR/policy.json:3: cannot read the JWKS file DIR/missing.json: ");
      expect(read(policy("jwks.json", '["HS256"]'))).toEqual(['DIR/policy.json:3: algorithm "HS256" does not go with a "jwks" file: use RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("claim references", () => {
  test("found in value fields, whole lists, list items and conditions", () => {
    const model = {
      org_id: { filterType: "number", type: "equals", filter: { claim: "org" } },
      status: { filterType: "set", values: ["active", { claim: "s" }] },
      name: { filterType: "text", operator: "OR", conditions: [{ type: "equals", filter: { claim: "n" } }, { type: "contains", filter: "x" }] },
      email: { filterType: "set", values: { claim: "emails" } },
    };
    expect(findClaims(model)).toEqual({
      refs: [
        { name: "org", path: ["org_id", "filter"] },
        { name: "s", path: ["status", "values", 1] },
        { name: "n", path: ["name", "conditions", 0, "filter"] },
        { name: "emails", path: ["email", "values"] },
      ],
      problems: [],
    });
  });

  test("replaced by the claims' values converted by their columns' kinds; a whole list from a scalar is a list of one; an absent or null claim is missing", () => {
    const model = { org_id: { filterType: "set", values: { claim: "org" } }, name: { filterType: "text", filter: { claim: "n" } } };
    const refs = findClaims(model).refs;
    const substituted = (claims: Record<string, unknown>) => {
      const values = convertClaims(refs, claims, SCHEMA);
      return Array.isArray(values) ? substituteClaims(model, refs, values) : values;
    };
    expect(substituted({ org: 7, n: "ann" })).toEqual({ org_id: { filterType: "set", values: [7] }, name: { filterType: "text", filter: "ann" } });
    expect(substituted({ org: [7, "8"], n: "ann" })).toEqual({ org_id: { filterType: "set", values: [7, 8] }, name: { filterType: "text", filter: "ann" } });
    expect(substituted({ org: 7 })).toEqual({ reason: "missing_claim", claim: "n", detail: 'the claim "n" is absent or null' });
    expect(substituted({ org: 7, n: null })).toEqual({ reason: "missing_claim", claim: "n", detail: 'the claim "n" is absent or null' });
    // the model itself is left as it was
    expect(model.org_id.values).toEqual({ claim: "org" });
  });
});
