/**
 * The fleet test (docs/operations.md "7. The fleet test"), bounded and on loopback only:
 *
 * - PostgreSQL (Debian's, in a temporary directory) with a `users` table of `--rows` rows;
 * - an S3-compatible server (s3rver, in this process) with a bucket, the location
 *   `s3://fleet/users` (or, with `--location dir`, a shared directory);
 * - a publisher: the loop of docs/operations.md (`snapshot build --from` PostgreSQL &&
 *   `snapshot publish --to` the location; a build starting every `--schedule` seconds, at once
 *   after one that ran longer), a shell loop in the background for the whole run;
 * - two replicas `serve --source <location> --poll <--poll>` behind nginx (deploy/nginx.conf,
 *   ports rewritten);
 * - wrk with GET and POST requests through nginx for `--seconds`. During the load a change is
 *   committed in PostgreSQL (1 row added, 1 in 1,000 renamed), by default while a scheduled
 *   build is reading the table, so that the change misses it and waits for the next cycle (the
 *   schedule's worst case; `--commit-at before-build`: half a second before a build starts, its
 *   best case); the schedule builds and publishes it; freshness is the time from the commit to
 *   both replicas' /healthz naming a snapshot that holds the change (checked on each replica,
 *   then through nginx). Then one
 *   replica is killed with SIGKILL and started again; its cold start is spawn → /readyz 200 with
 *   the latest published version, downloaded from the location.
 *
 * Passes when wrk saw no non-2xx answer and no socket error, the kill fell inside the load, both
 * replicas serve the latest published version and it holds the change, and the restarted one
 * came back ready with it. Exits 1 on FAIL.
 *
 *   bun scripts/fleet-test.ts [--rows 200000] [--seconds 60] [--location s3|dir] [--schedule 10] [--poll 2]
 *                             [--commit-at reading|before-build]
 *
 * Needs PostgreSQL (`sh scripts/install-postgres.sh`), nginx and wrk (Debian packages:
 * `sh scripts/install-fleet-tools.sh`; `npm test` runs both, and test/publish/fleet.test.ts runs
 * this script at 200,000 rows). The fleet's machinery (PostgreSQL, s3rver, replicas, nginx, wrk,
 * the cleanup) is scripts/fleet-harness.ts, shared with the live fleet (scripts/fleet-live.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CLI, ROOT, createLog, createUsersTable, freePort, getJson, openFleet, readyId, s, servedId, tail, waitFor, wrkSummary } from "./fleet-harness.ts";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "200000" },
    seconds: { type: "string", default: "60" },
    location: { type: "string", default: "s3" },
    schedule: { type: "string", default: "10" },
    poll: { type: "string", default: "2" },
    "commit-at": { type: "string", default: "reading" },
  },
});
const rows = Number(values.rows);
const seconds = Number(values.seconds);
const schedule = Number(values.schedule);
const poll = Number(values.poll);
if (values.location !== "s3" && values.location !== "dir") throw new Error(`--location: s3 or dir (got ${values.location})`);
const commitAt = values["commit-at"];
if (commitAt !== "reading" && commitAt !== "before-build") throw new Error(`--commit-at: reading or before-build (got ${commitAt})`);
for (const [name, value] of Object.entries({ rows, seconds, schedule, poll })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name}: a positive integer (got ${value})`);
}
const log = createLog("fleet");
const fleet = openFleet("fleet", { log }); // before s3rver: PostgreSQL starts blocking (spawnSync)
const { dir, sql, replicas } = fleet;

let failed = false;
try {
  await createUsersTable(sql, rows);
  log(`PostgreSQL: ${rows} rows`);

  // the location: a bucket on s3rver (loopback), or a shared directory
  await fleet.useLocation(values.location);
  const { location, manifest } = fleet;

  // the publisher: build and publish on a schedule, for the whole run (docs/operations.md §2)
  const publisherLog = join(dir, "publisher.log");
  const loop = [
    'exec >>"$FLEET_LOG" 2>&1',
    // a build starts every --schedule seconds; one that takes longer is followed at once
    "while true; do",
    "  start=$(date +%s%3N)",
    '  echo "BUILD start=$start"',
    '  "$FLEET_BUN" "$FLEET_CLI" snapshot build --from "$FLEET_PG" --table users -o "$FLEET_SNAP" && "$FLEET_BUN" "$FLEET_CLI" snapshot publish "$FLEET_SNAP" --to "$FLEET_LOCATION"',
    "  rc=$?",
    "  end=$(date +%s%3N)",
    '  echo "CYCLE start=$start end=$end rc=$rc"',
    "  left=$((start + FLEET_SCHEDULE * 1000 - end))",
    '  if [ "$left" -gt 0 ]; then sleep "$((left / 1000)).$(printf %03d $((left % 1000)))"; fi',
    "done",
  ].join("\n");
  const publisher = Bun.spawn(["sh", "-c", loop], {
    cwd: ROOT,
    detached: true,
    stdout: "ignore",
    stderr: "ignore",
    env: {
      ...fleet.env,
      FLEET_LOG: publisherLog,
      FLEET_BUN: CLI[0],
      FLEET_CLI: CLI[1],
      FLEET_PG: fleet.pg.url,
      FLEET_SNAP: join(dir, "users.snap"),
      FLEET_LOCATION: location,
      FLEET_SCHEDULE: String(schedule),
    },
  });
  fleet.track(publisher, true); // its own process group: the cleanup kills the loop and its current build together
  log(`publisher: build from PostgreSQL && publish to ${location}, a build starting every ${schedule} s (pid ${publisher.pid})`);
  const first = await waitFor(`a first publish to ${location}`, manifest, 500);
  log(`first version published: ${first.current.snapshotId} (${first.current.rows} rows, ${(first.current.bytes / 2 ** 20).toFixed(1)} MiB)`);

  // two replicas following the location
  const replicaArgs = ["--poll", String(poll)];
  const replicaStart = performance.now();
  fleet.addReplicas([freePort(), freePort()], replicaArgs);
  await Promise.all(replicas.map((r) => waitFor(`replica on ${r.port} ready with ${first.current.snapshotId}`, async () => ((await readyId(r.port)) === first.current.snapshotId ? true : null))));
  log(`replicas on ${replicas.map((r) => r.port).join(", ")} ready (--poll ${poll}): cold start of both ${s(performance.now() - replicaStart)}`);

  // nginx over the two replicas, from deploy/nginx.conf
  const nginxPort = await fleet.startNginx();
  log(`nginx on ${nginxPort}`);

  // wrk: GET and POST through nginx for --seconds
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) {
    lines.push(`GET\t/api/users?page=${1 + (i % 50)}&pageSize=20&sortBy=name&filter[status]=${i % 2 === 0 ? "active" : "inactive"}`);
    lines.push(`POST\t/api/users\t${JSON.stringify({ startRow: (i % 100) * 100, endRow: (i % 100) * 100 + 100, sortModel: [{ colId: "age", sort: "desc" }], filterModel: { role: { filterType: "set", values: ["admin"] } } })}`);
  }
  const loadStart = performance.now();
  const { child: wrk, output: wrkOutput } = fleet.startWrk(nginxPort, seconds, lines);
  log(`wrk: 2 threads, 32 connections, ${seconds} s, GET and POST through nginx`);

  // a change committed in PostgreSQL during the load; the schedule builds and publishes it
  await Bun.sleep(Math.min(5, seconds / 6) * 1000);
  // the commit's place in the schedule's cycle: while a build reads the table (the change misses
  // that build and waits for the next cycle: the schedule's worst case), or half a second before
  // a build starts (its best case)
  const count = (marker: string) => readFileSync(publisherLog, "utf8").split(marker).length - 1;
  if (commitAt === "reading") {
    const builds = count("BUILD start=");
    await waitFor("the next build to start", async () => (count("BUILD start=") > builds ? true : null));
    // its read of the table: a transaction holding a PostgreSQL snapshot for a quarter of a
    // second (the read of 100,000 rows takes about half a second here)
    await waitFor("the build reading PostgreSQL", async () => {
      const reading = await sql`SELECT 1 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL AND xact_start < now() - interval '250 milliseconds'`;
      return reading.length > 0 ? true : null;
    });
  } else {
    const ends = count("CYCLE start=");
    await waitFor("the next cycle to end", async () => (count("CYCLE start=") > ends ? true : null));
    // the next build starts --schedule seconds after this one started, or at once when it ran longer
    const last = [...readFileSync(publisherLog, "utf8").matchAll(/CYCLE start=(\d+) end=(\d+)/g)].at(-1) as RegExpMatchArray;
    const nextStart = Math.max(Number(last[2]), Number(last[1]) + schedule * 1000);
    await Bun.sleep(Math.max(0, nextStart - 500 - Date.now()));
  }
  const before = (await manifest())?.current.snapshotId;
  const newId = rows + 1;
  const committed = performance.now();
  const committedWall = Date.now();
  await sql.unsafe(`UPDATE users SET name = name || ' (renamed)' WHERE id % 1000 = 0; INSERT INTO users VALUES (${newId}, 'Newcomer', 'new@example.com', 'active', 'viewer', 30, date_trunc('milliseconds', now()));`).simple();
  log(`committed (${commitAt === "reading" ? "while a build reads the table" : "just before a build starts"}): row ${newId} added, ${Math.floor(rows / 1000)} rows renamed (published version before: ${before})`);

  /** Whether the version answering at `base` holds the change: row `newId` is there and row 1000 is renamed. */
  const holdsChange = async (base: string): Promise<boolean> => {
    const added = await getJson(`${base}/api/users?filter[id]=${newId}&pageSize=1`);
    const renamed = await getJson(`${base}/api/users?filter[id]=1000&pageSize=1`);
    const addedRow = (added?.body?.data as { name?: string }[] | undefined)?.[0];
    const renamedRow = (renamed?.body?.data as { name?: string }[] | undefined)?.[0];
    return added?.status === 200 && addedRow?.name === "Newcomer" && renamed?.status === 200 && renamedRow?.name === "User 1000 (renamed)";
  };
  // freshness: the commit → each replica's /healthz naming a version that holds the change
  const fresh = await Promise.all(
    replicas.map((r) =>
      waitFor(`replica on ${r.port} serving a version with the change`, async () => {
        const id = await servedId(r.port);
        if (id === null || id === before) return null;
        if (!(await holdsChange(`http://127.0.0.1:${r.port}`))) throw new Error(`replica on ${r.port} serves ${id}, which does not hold the change`);
        return { id, ms: performance.now() - committed };
      }),
    ),
  );
  const freshness = Math.max(...fresh.map((f) => f.ms));
  const next = fresh[0].id;
  if (fresh[1].id !== next) throw new Error(`the replicas serve different new versions: ${fresh[0].id}, ${fresh[1].id}`);
  const published = (await manifest())?.current;
  log(`change committed → both replicas serving ${next}: ${s(freshness)} (${fresh.map((f) => `${replicas[fresh.indexOf(f)].port} at ${s(f.ms)}`).join(", ")})`);
  if (published !== undefined && published.snapshotId === next) {
    log(`  built ${published.createdAt}, published ${published.publishedAt}: commit → publish started ${s(Date.parse(published.publishedAt) - committedWall)}`);
  }
  const throughNginx = await holdsChange(`http://127.0.0.1:${nginxPort}`);
  log(`the change through nginx: ${throughNginx ? "row " + newId + " and the renamed row returned" : "NOT returned"}`);

  // one replica killed with SIGKILL and started again: its cold start from the location
  const victim = replicas[0];
  const killedDuringLoad = wrk.exitCode === null;
  const latest = (await manifest())?.current.snapshotId;
  const restarted = performance.now();
  await fleet.restartReplica(victim, replicaArgs);
  await waitFor(`restarted replica on ${victim.port} ready with ${latest}`, async () => ((await readyId(victim.port)) === latest ? true : null), 50);
  const coldStart = performance.now() - restarted;
  const readyDuringLoad = wrk.exitCode === null;
  log(`replica on ${victim.port} killed (SIGKILL ${s(restarted - loadStart)} into the load) and started again: ready with ${latest} after ${s(coldStart)} (cold start from ${values.location === "s3" ? "S3" : "the directory"})`);

  // the load's end
  await wrk.exited;
  const output = await wrkOutput;
  const summary = wrkSummary(output);
  if (summary === null) throw new Error(`no wrk summary: ${output}`);
  const { socketErrors, rps } = summary;
  log(`wrk through nginx: ${summary.requests} requests in ${(summary.duration_us / 1e6).toFixed(1)} s (${rps} req/s), p99 ${(summary.p99_us / 1000).toFixed(1)} ms, non-2xx ${summary.errors_status}, socket errors ${socketErrors}`);

  // the publisher's cycles
  const cycles = [...readFileSync(publisherLog, "utf8").matchAll(/CYCLE start=(\d+) end=(\d+) rc=(\d+)/g)].map((m) => ({ start: Number(m[1]), end: Number(m[2]), rc: Number(m[3]) }));
  const durations = cycles.map((c) => c.end - c.start).sort((a, b) => a - b);
  log(`publisher: ${cycles.length} cycles, build + publish ${s(durations[0] ?? 0)} to ${s(durations.at(-1) ?? 0)} (median ${s(durations[Math.floor(durations.length / 2)] ?? 0)}), ${cycles.filter((c) => c.rc !== 0).length} failed`);
  const carrying = published === undefined ? undefined : cycles.find((c) => c.start <= Date.parse(published.publishedAt) && Date.parse(published.publishedAt) <= c.end);
  if (carrying !== undefined) {
    log(`  the change's cycle: started ${s(carrying.start - committedWall)} after the commit, took ${s(carrying.end - carrying.start)}; its end → both replicas serving ${s(committedWall + freshness - carrying.end)}`);
  }

  const ids = await Promise.all(replicas.map((r) => servedId(r.port)));
  const final = (await manifest())?.current.snapshotId;
  const problems: string[] = [];
  if (summary.errors_status !== 0) problems.push(`${summary.errors_status} non-2xx answers`);
  if (socketErrors !== 0) problems.push(`${socketErrors} socket errors`);
  if (!ids.every((id) => id === final && id === next)) problems.push(`replicas serve ${ids.join(", ")}; published ${final}; the change is in ${next}`);
  if (!throughNginx) problems.push("the change was not returned through nginx");
  if (!killedDuringLoad) problems.push(`the kill came after the load ended (${seconds} s): raise --seconds`);
  if (!readyDuringLoad) log("note: the restarted replica became ready after the load ended");
  if (cycles.some((c) => c.rc !== 0)) problems.push(`publisher cycles failed:\n${tail(publisherLog, 10)}`);
  log(
    `figures: rows ${rows}, location ${values.location}, schedule ${schedule} s, poll ${poll} s, commit ${commitAt}; ${summary.requests} requests, ${rps} req/s, non-2xx ${summary.errors_status}, socket errors ${socketErrors}; freshness ${s(freshness)}; cold start ${s(coldStart)}`,
  );
  log(problems.length === 0 ? "PASS" : `FAIL: ${problems.join("; ")}`);
  failed = problems.length > 0;
} catch (error) {
  log(`FAIL: ${(error as Error).message}`);
  for (const file of [join(dir, "publisher.log"), ...replicas.flatMap((r) => r.logs)]) {
    const lines = tail(file, 5);
    if (lines !== "") console.log(`--- ${file}\n${lines}`);
  }
  failed = true;
} finally {
  await fleet.cleanup();
}
process.exit(failed ? 1 : 0);
