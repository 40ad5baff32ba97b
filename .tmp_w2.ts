import { generateUsers } from "./src/generate/users.ts";
import { openSync, writeSync, closeSync } from "node:fs";
const n = 1_000_000;
const rows = [...generateUsers({ count: n, seed: 1 })];
let t = performance.now();
let total = 0;
for (const r of rows) { const line = `{"id":${JSON.stringify(r.id)},"name":${JSON.stringify(r.name)},"email":${JSON.stringify(r.email)},"status":${JSON.stringify(r.status)}}\n`; total += line.length; }
console.log("format stringify x4", (performance.now() - t).toFixed(0));
t = performance.now();
for (const r of rows) { const line = `{"id":${r.id},"name":${JSON.stringify(r.name)},"email":"${r.email}","status":"${r.status}"}\n`; total += line.length; }
console.log("format stringify name only", (performance.now() - t).toFixed(0));
t = performance.now();
for (const r of rows) { const line = JSON.stringify(r) + "\n"; total += line.length; }
console.log("JSON.stringify(obj)", (performance.now() - t).toFixed(0));
// write paths
t = performance.now();
{
  const w = Bun.file("/tmp/gen-bench/a.ndjson").writer({ highWaterMark: 1 << 20 });
  for (const r of rows) w.write(`{"id":${r.id},"name":${JSON.stringify(r.name)},"email":${JSON.stringify(r.email)},"status":"${r.status}"}\n`);
  await w.end();
}
console.log("FileSink per row", (performance.now() - t).toFixed(0));
t = performance.now();
{
  const fd = openSync("/tmp/gen-bench/b.ndjson", "w");
  let s = "";
  for (const r of rows) { s += `{"id":${r.id},"name":${JSON.stringify(r.name)},"email":${JSON.stringify(r.email)},"status":"${r.status}"}\n`; if (s.length > 1 << 20) { writeSync(fd, s); s = ""; } }
  writeSync(fd, s); closeSync(fd);
}
console.log("concat + writeSync", (performance.now() - t).toFixed(0));
t = performance.now();
{
  const fd = openSync("/tmp/gen-bench/c.ndjson", "w");
  let parts: string[] = []; let c = 0;
  for (const r of rows) { const l = `{"id":${r.id},"name":${JSON.stringify(r.name)},"email":${JSON.stringify(r.email)},"status":"${r.status}"}\n`; parts.push(l); c += l.length; if (c > 1 << 20) { writeSync(fd, parts.join("")); parts = []; c = 0; } }
  writeSync(fd, parts.join("")); closeSync(fd);
}
console.log("parts join + writeSync", (performance.now() - t).toFixed(0));
