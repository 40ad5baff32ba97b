import { readUsers } from "./src/ingest/read.ts";
const n = process.argv[2];
for (const f of ["ndjson", "csv", "json"]) {
  const p = `/tmp/gen-bench/users-${n}.${f}`;
  const t = performance.now();
  const cols = await readUsers(p);
  const ms = performance.now() - t;
  console.log(f, cols.ids.length, ms.toFixed(0), "ms", Math.round(cols.ids.length / ms * 1000), "rows/s", cols.names[5], cols.emails[5], cols.lines[5], process.memoryUsage().rss >> 20, "MB rss");
}
