import { generateUsers } from "./src/generate/users.ts";
let t = performance.now();
let i = 0;
for (const u of generateUsers({ count: 40, seed: 42 })) { if (i++ < 40) console.log(JSON.stringify(u)); }
console.log("first", performance.now() - t);
for (const n of [100_000, 1_000_000]) {
  t = performance.now();
  let c = 0;
  for (const u of generateUsers({ count: n, seed: 7 })) c += u.name.length;
  const ms = performance.now() - t;
  console.log(n, ms.toFixed(0), "ms", Math.round(n / ms * 1000), "rows/s");
}
