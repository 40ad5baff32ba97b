/**
 * Test helper: the access policy of the change-event tests (docs/api.md "Access control"): two
 * API keys, `admin` (every row and column) and `actives` (the rows whose `status` is "active",
 * columns `id`, `name`, `status`), written as `policy.json` in a directory.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** The admin role's key. */
export const ADMIN_KEY = "admin-key-0123456789";
/** The `actives` role's key. */
export const ACTIVES_KEY = "actives-key-0123456789";

/** SHA-256 of `text`, hex (how a policy names a key). */
const sha256 = (text: string): string => new Bun.CryptoHasher("sha256").update(text).digest("hex");

/**
 * Writes the policy into `dir` and returns its path.
 * @throws Error when the file cannot be written
 */
export function writeActivesPolicy(dir: string): string {
  const path = join(dir, "policy.json");
  writeFileSync(
    path,
    JSON.stringify({
      keys: [
        { sha256: sha256(ADMIN_KEY), role: "admin" },
        { sha256: sha256(ACTIVES_KEY), role: "actives" },
      ],
      roles: { admin: { columns: "*" }, actives: { columns: ["id", "name", "status"], filterModel: { status: { filterType: "set", values: ["active"] } } } },
    }),
  );
  return path;
}
