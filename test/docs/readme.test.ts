/**
 * The README's sample requests and answers, taken from a real run so that they cannot drift: the
 * two requests of its "Requests" section are sent to a server over the default data (what
 * `npm start` serves), and every part of the answers the README shows — the first record, the
 * totals, the paging and the echoed query — must be what the server answers. The README elides
 * the rest of the data with `…`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type TestServer, startTestServer } from "../support/server.ts";

const README = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");

/** The "Requests" section: from its heading to the next one. */
function requestsSection(): string {
  const start = README.indexOf("## Requests");
  if (start < 0) throw new Error("README has no ## Requests section");
  const end = README.indexOf("\n## ", start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The fenced blocks of a section, with their language. */
function blocks(section: string): { lang: string; body: string }[] {
  return [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], body: m[2] }));
}

/**
 * A shown answer as the object it stands for: the data array cut to the records written out in
 * full (an elided `…` record and the rest dropped), every other member as written.
 */
function shownAnswer(text: string): { data: unknown[]; rest: Record<string, unknown> } {
  const cut = text.replace(/,\s*…\]/, "]").trim();
  const parsed = JSON.parse(cut) as { data: unknown[] } & Record<string, unknown>;
  const { data, ...rest } = parsed;
  return { data, rest };
}

let srv: TestServer;
beforeAll(() => {
  srv = startTestServer("default");
}, 120_000);
afterAll(() => srv.close());

describe("the README's sample answers are what the server answers", () => {
  const section = requestsSection();
  const fenced = blocks(section);
  const commands = fenced.filter((b) => b.lang === "sh");
  const answers = fenced.filter((b) => b.lang === "json");

  test("the GET request (TanStack Table)", async () => {
    const url = /curl -g '([^']+)'/.exec(commands[0].body)?.[1] as string;
    expect(url).toBeDefined();
    const got = (await (await fetch(url.replace("http://127.0.0.1:3000", srv.url))).json()) as { data: unknown[] } & Record<string, unknown>;
    const shown = shownAnswer(answers[0].body);
    expect(shown.data.length).toBeGreaterThan(0);
    expect(got.data.slice(0, shown.data.length)).toEqual(shown.data);
    for (const [member, value] of Object.entries(shown.rest)) expect({ member, value: got[member] }).toEqual({ member, value });
  });

  test("the second GET spelling answers too (limit, sort, order, percent-encoded brackets)", async () => {
    const url = /curl '([^']+)'/.exec(commands[0].body)?.[1] as string;
    const res = await fetch(url.replace("http://127.0.0.1:3000", srv.url));
    expect(res.status).toBe(200);
  });

  test("the POST request (AG Grid's infinite row model)", async () => {
    const body = /-d '([\s\S]+?)'\s*$/m.exec(commands[1].body)?.[1] as string;
    expect(body).toBeDefined();
    const res = await fetch(`${srv.url}/api/users`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const got = (await res.json()) as { data: unknown[] } & Record<string, unknown>;
    const shown = shownAnswer(answers[1].body);
    expect(got.data.slice(0, shown.data.length)).toEqual(shown.data);
    for (const [member, value] of Object.entries(shown.rest)) expect({ member, value: got[member] }).toEqual({ member, value });
  });
});
