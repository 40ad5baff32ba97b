import { generateUsers, writeRecords } from "./src/generate/users.ts";
import { open } from "node:fs/promises";
const n = 1_000_000;
let t = performance.now();
const rows = [...generateUsers({ count: n, seed: 1 })];
console.log("gen", (performance.now() - t).toFixed(0));
for (let rep = 0; rep < 2; rep++) {
t = performance.now();
await writeRecords("/tmp/gen-bench/x.ndjson", rows, "ndjson");
console.log("writeRecords from array", (performance.now() - t).toFixed(0));
}
const text = await Bun.file("/tmp/gen-bench/x.ndjson").text();
t = performance.now();
const h = await open("/tmp/gen-bench/y.ndjson", "w");
for (let o = 0; o < text.length; o += 1 << 20) await h.write(text.slice(o, o + (1 << 20)));
console.log("handle.write 1MB strings", (performance.now() - t).toFixed(0));
t = performance.now();
await h.sync();
console.log("sync", (performance.now() - t).toFixed(0));
await h.close();
const buf = Buffer.from(text);
t = performance.now();
const h2 = await open("/tmp/gen-bench/z.ndjson", "w");
for (let o = 0; o < buf.length; o += 1 << 20) await h2.write(buf.subarray(o, o + (1 << 20)));
console.log("handle.write 1MB buffers", (performance.now() - t).toFixed(0));
await h2.close();
