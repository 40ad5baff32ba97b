/**
 * No test leaves a process behind (support/no-process-left.ts, preloaded by bunfig.toml): a
 * test file that spawns servers — test/snapshot/reload-faults.test.ts, whose `serve --workers`
 * workers once outlived a run — is run as a `bun test` of its own, and once it has exited none
 * of the processes it started runs (an orphan of it is handed to this process, a subreaper too,
 * so /proc finds it among this process's descendants). A file whose test fails while a
 * supervisor and its workers run leaves nothing either; a file that forgets a process fails its
 * run, naming it, and the process is killed.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { descendantsOf, describeProcesses, isRunning } from "./processes.ts";
import { ROOT } from "./serve-process.ts";

/** Runs `bun test FILE` (the repository's bunfig.toml: the preload); resolves with its exit code, output, and what of it still runs after its exit. */
async function runFile(file: string, env: Record<string, string> = {}): Promise<{ code: number; output: string; left: string }> {
  const before = new Set(descendantsOf(process.pid).map((p) => p.pid));
  const child = Bun.spawn([process.execPath, "test", "--timeout", "120000", file], { cwd: ROOT, env: { ...process.env, ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  before.add(child.pid);
  // its run stopped, and waited for, all it started (its preload kills and waits for what was left)
  return { code, output: `${out}${err}`, left: describeProcesses(descendantsOf(process.pid).filter((p) => !before.has(p.pid))) };
}

describe("the test run leaves no process behind", () => {
  test("a test file that starts servers and workers (reload-faults): every process it started has ended when its run has", async () => {
    const run = await runFile(join("test", "snapshot", "reload-faults.test.ts"));
    // whether its own tests pass is its own business (it runs in the suite too): here, that it ran
    // them all, and that nothing it started outlived it, by its preload's count and by ours
    expect(run.output).toMatch(/Ran \d+ tests across 1 file/);
    expect(run.output).not.toContain("process(es) running");
    expect(run.left).toBe("");
  }, 300_000);

  test("a test that fails while a supervisor and its workers run: its finally stops them all", async () => {
    const run = await runFile(`./${join("test", "fixtures", "processes", "fails-with-workers.ts")}`);
    expect(run.code).toBe(1);
    expect(run.output).toContain('Expected: "this test fails"');
    expect(run.output).not.toContain("process(es) running");
    const workers = (/workers (\d+) (\d+)/.exec(run.output) ?? []).slice(1).map(Number);
    expect(workers.length).toBe(2);
    for (const pid of workers) expect(isRunning(pid)).toBe(false);
    expect(run.left).toBe("");
  }, 120_000);

  test("a test file that forgets a process: its run fails naming it, and it is killed", async () => {
    const run = await runFile(`./${join("test", "fixtures", "processes", "leaves-a-process.ts")}`);
    expect(run.code).toBe(1);
    const pid = Number(/left (\d+)/.exec(run.output)?.[1]);
    expect(run.output).toContain("the test run left 1 process(es) running (killed now):");
    expect(run.output).toContain(`${pid} (parent `);
    expect(run.output).toContain("sleep 600");
    expect(isRunning(pid)).toBe(false);
    expect(run.left).toBe("");
  }, 120_000);
});
