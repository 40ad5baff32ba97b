import { writeUsers } from "./src/generate/users.ts";
import { statSync } from "node:fs";
const n = Number(process.argv[2] ?? 1_000_000);
for (const format of ["ndjson", "csv", "json"] as const) {
  const t = performance.now();
  const p = `/tmp/gen-bench/users-${n}.${format}`;
  await writeUsers(p, { count: n, seed: 1, format });
  const ms = performance.now() - t;
  console.log(format, n, ms.toFixed(0), "ms", Math.round(n / ms * 1000), "rows/s", (statSync(p).size / 1e6).toFixed(1), "MB");
}
