const p = process.argv[2]; const mode = process.argv[3];
const text = await Bun.file(p).text();
const lines = text.split("\n");
console.log("lines", lines.length);
const names: string[] = []; const emails: string[] = [];
const t = performance.now(); let last = t;
for (let i = 0; i < lines.length - 1; i++) {
  const o = JSON.parse(lines[i]);
  if (mode === "store") { names.push(o.name); emails.push(o.email); }
  if (mode === "storeobj") { names.push(o); }
  if (i % 500000 === 0 && i) { const now = performance.now(); console.log(i, (now - last).toFixed(0)); last = now; }
}
console.log(mode, "total", (performance.now() - t).toFixed(0));
