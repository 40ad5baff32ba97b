#!/usr/bin/env bun
/**
 * Mints a JWT for trying access control (docs/api.md "Access control"): signed with the first
 * `jwt.secret` of a policy file, with the claims given, the policy's issuer and audience when it
 * names them, and an expiry. For tests and demos: in production an identity provider issues the
 * tokens.
 *
 * Usage: `bun scripts/mint-token.ts POLICY CLAIMS_JSON [--expires 1h]`, e.g.
 * `bun scripts/mint-token.ts policy.json '{"role":"support","org_id":7}'`; prints the token.
 * Exits 1 with the reason when the policy has no secret, the claims are not a JSON object, or
 * their role is not one of the policy's.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { SignJWT } from "jose";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { expires: { type: "string", default: "1h" } } });

function fail(reason: string): never {
  process.stderr.write(`error: ${reason}\nusage: bun scripts/mint-token.ts POLICY CLAIMS_JSON [--expires 1h]\n`);
  process.exit(1);
}

const [policyFile, claimsText] = positionals;
if (policyFile === undefined || claimsText === undefined) fail("give the policy file and the claims");
const policy = JSON.parse(readFileSync(policyFile, "utf8")) as {
  jwt?: { secret?: string | string[]; algorithms?: string[]; issuer?: string | string[]; audience?: string | string[] };
  roleClaim?: string;
  roles?: Record<string, unknown>;
};
const secret = Array.isArray(policy.jwt?.secret) ? policy.jwt?.secret[0] : policy.jwt?.secret;
if (typeof secret !== "string") fail(`${policyFile} has no "jwt": {"secret": …} to sign with (a JWKS policy verifies tokens your identity provider signs)`);
let claims: Record<string, unknown>;
try {
  claims = JSON.parse(claimsText) as Record<string, unknown>;
} catch (error) {
  fail(`the claims are not JSON: ${(error as Error).message}`);
}
if (typeof claims !== "object" || claims === null || Array.isArray(claims)) fail("the claims must be a JSON object");
const roleClaim = policy.roleClaim ?? "role";
const role = claims[roleClaim];
if (typeof role !== "string" || !Object.hasOwn(policy.roles ?? {}, role)) fail(`the claims' ${JSON.stringify(roleClaim)} must be one of the policy's roles: ${Object.keys(policy.roles ?? {}).join(", ")}`);

const algorithm = policy.jwt?.algorithms?.[0] ?? "HS256";
let token = new SignJWT(claims).setProtectedHeader({ alg: algorithm, typ: "JWT" }).setIssuedAt().setExpirationTime(values.expires as string);
const issuer = Array.isArray(policy.jwt?.issuer) ? policy.jwt?.issuer[0] : policy.jwt?.issuer;
if (issuer !== undefined) token = token.setIssuer(issuer);
const audience = Array.isArray(policy.jwt?.audience) ? policy.jwt?.audience[0] : policy.jwt?.audience;
if (audience !== undefined) token = token.setAudience(audience);
process.stdout.write(`${await token.sign(new TextEncoder().encode(secret))}\n`);
