import { readUsers } from "/tmp/read_exp.ts";
const p = process.argv[2];
const t = performance.now();
let last = t; let lastB = 0;
const cols = await readUsers(p, (b, total) => { if (b - lastB >= 100e6) { const now = performance.now(); console.log((b/1e6).toFixed(0), "MB", (now - last).toFixed(0), "ms per 100MB"); last = now; lastB = b; } });
console.log("total", (performance.now() - t).toFixed(0));
