import { generateUsers } from "./src/generate/users.ts";
const n = 1_000_000;
const rows = [...generateUsers({ count: n, seed: 1 })];
function q(s: string): string {
  for (let i = 0; i < s.length; i++) { const c = s.charCodeAt(i); if (c < 32 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(s); }
  return `"${s}"`;
}
const NEEDS = /["\\\u0000-\u001f\ud800-\udfff]/;
function q2(s: string): string { return NEEDS.test(s) ? JSON.stringify(s) : `"${s}"`; }
for (let rep = 0; rep < 2; rep++) {
let t = performance.now(); let total = 0;
for (const r of rows) { const line = `{"id":${JSON.stringify(r.id)},"name":${JSON.stringify(r.name)},"email":${JSON.stringify(r.email)},"status":${JSON.stringify(r.status)}}\n`; total += line.length; }
console.log("stringify x4", (performance.now() - t).toFixed(0));
t = performance.now();
for (const r of rows) { const line = `{"id":${r.id},"name":${JSON.stringify(r.name)},"email":${JSON.stringify(r.email)},"status":${JSON.stringify(r.status)}}\n`; total += line.length; }
console.log("stringify x3", (performance.now() - t).toFixed(0));
t = performance.now();
for (const r of rows) { const line = `{"id":${r.id},"name":${q(r.name)},"email":${q(r.email)},"status":${q(r.status)}}\n`; total += line.length; }
console.log("q scan", (performance.now() - t).toFixed(0));
t = performance.now();
for (const r of rows) { const line = `{"id":${r.id},"name":${q2(r.name)},"email":${q2(r.email)},"status":${q2(r.status)}}\n`; total += line.length; }
console.log("q2 regex", (performance.now() - t).toFixed(0));
}
