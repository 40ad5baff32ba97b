/**
 * API keys (docs/api.md "HTTP envelope", API keys): loading them from a file or a comma list,
 * and checking `Authorization: Bearer <key>` (RFC 6750 §2.1) in constant time.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readRegular } from "../files/blocking.ts";

/** Largest API keys file read, in bytes. */
const MAX_KEYS_FILE_BYTES = 16 * 1024 * 1024;

/** Checks an `Authorization` header value against the configured keys. */
export interface ApiKeyCheck {
  /**
   * "ok" for a configured key, "missing" without a Bearer credential, "invalid" for another one.
   * Takes the same time whichever key matches, and whether any does (see {@link createKeyCheck}).
   */
  check: (authorization: string | null) => "ok" | "missing" | "invalid";
  /** Keys configured. */
  count: number;
}

/**
 * Reads an API keys file: one key a line; blank lines and lines starting with `#` are ignored;
 * spaces around a key are trimmed.
 * @throws Error naming the file when it cannot be read (a FIFO or another file that is not a
 *   regular file included) or holds no key
 */
export function readApiKeysFile(path: string): string[] {
  let text: string;
  try {
    // opened without blocking: a FIFO here is refused at once instead of holding up the start
    const bytes = readRegular(path, MAX_KEYS_FILE_BYTES);
    if (bytes === null) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    text = new TextDecoder().decode(bytes);
  } catch (error) {
    throw new Error(`cannot read the API keys file ${path}: ${(error as Error).message}`);
  }
  const keys = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  if (keys.length === 0) throw new Error(`the API keys file ${path} holds no key (one key a line; blank lines and # comments are ignored)`);
  return keys;
}

/**
 * Parses `API_KEYS`: a comma list of keys, spaces around each trimmed, empty entries ignored.
 * A value with commas but no key (`,`, ` , `) is a mistake that would turn keys off without a
 * word: it is refused.
 * @returns the keys; empty when the value is absent or blank (keys off)
 * @throws Error when the value is not blank but holds no key
 */
export function parseApiKeysList(value: string | undefined): string[] {
  if (value === undefined || value.trim() === "") return [];
  const keys = value
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
  if (keys.length === 0) throw new Error("API_KEYS holds no key, only commas and spaces: give a comma list of keys, or leave it empty (or unset) to run without keys");
  return keys;
}

/** SHA-256 of a string: every key and every presented token compares as 32 bytes. */
function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** `Bearer <token>`: the scheme is case-insensitive (RFC 9110 §11.1), one space or more before the token. */
const BEARER = /^bearer +(\S+) *$/i;

/**
 * A checker for `keys`. The presented token and each key are hashed to 32 bytes (SHA-256) and
 * compared with crypto.timingSafeEqual against every key, without stopping at the first match:
 * the time taken says nothing about a key's content or which key matched.
 * @param keys at least one key
 * @throws Error when `keys` is empty
 */
export function createKeyCheck(keys: readonly string[]): ApiKeyCheck {
  if (keys.length === 0) throw new Error("at least one API key is needed");
  const digests = keys.map(digest);
  return {
    count: keys.length,
    check(authorization) {
      if (authorization === null) return "missing";
      const match = BEARER.exec(authorization);
      if (match === null) return "missing";
      const presented = digest(match[1]);
      let ok = false;
      for (let i = 0; i < digests.length; i++) {
        // Non-short-circuit OR: every key is compared.
        ok = timingSafeEqual(presented, digests[i]) || ok;
      }
      return ok ? "ok" : "invalid";
    },
  };
}

/** True for a host that only the local machine reaches: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === "::ffff:127.0.0.1";
}
