// microbench: per-field decode options
const text = await Bun.file("/tmp/gen-bench/users-1000000.ndjson").text();
const buf = Buffer.from(text);
const starts: number[] = []; const ends: number[] = [];
// find name field byte ranges roughly: between `"name":"` and next `"`
let p = 0;
while (true) { const a = buf.indexOf('"name":"', p); if (a < 0) break; const s = a + 8; const e = buf.indexOf(34, s); starts.push(s); ends.push(e); p = e; }
console.log(starts.length);
const dec = new TextDecoder();
for (let rep = 0; rep < 2; rep++) {
  let t = performance.now(); let L = 0;
  for (let i = 0; i < starts.length; i++) L += buf.utf8Slice(starts[i], ends[i]).length;
  console.log("utf8Slice", (performance.now() - t).toFixed(0));
  t = performance.now();
  for (let i = 0; i < starts.length; i++) L += buf.toString("utf8", starts[i], ends[i]).length;
  console.log("toString", (performance.now() - t).toFixed(0));
  t = performance.now();
  for (let i = 0; i < starts.length; i++) L += dec.decode(buf.subarray(starts[i], ends[i])).length;
  console.log("TextDecoder subarray", (performance.now() - t).toFixed(0));
  const lines = text.split("\n");
  t = performance.now();
  for (let i = 0; i < lines.length - 1; i++) L += JSON.parse(lines[i]).name.length;
  console.log("JSON.parse line", (performance.now() - t).toFixed(0));
}
