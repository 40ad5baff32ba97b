import { readUsers } from "./src/ingest/read.ts";
const p = process.argv[2];
const t = performance.now();
const cols = await readUsers(p);
const ms = performance.now() - t;
Bun.gc(true);
console.log(p, cols.ids.length, ms.toFixed(0), "ms", Math.round(cols.ids.length / ms * 1000), "rows/s", process.memoryUsage().rss >> 20, "MB rss after gc");
