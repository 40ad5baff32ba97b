/**
 * The live fleet's check of change events (scripts/fleet-events.ts `checkAnnounced`), on
 * hand-made listeners: a transaction is announced by the first change event at or past its
 * commit end (all its keys, or a refresh), and each way of missing one is reported.
 */
import { describe, expect, test } from "bun:test";
import { type CommittedTransaction, type HeardEvent, type Listener, checkAnnounced, versionLsn } from "../../scripts/fleet-events.ts";

const listener = (events: HeardEvent[]): Listener => ({ label: "L", events, connections: 1, resumedHeld: 0, resumedRefresh: 0, refused: 0, malformed: [], stopping: false, gate: null, done: Promise.resolve() });
const change = (at: number, version: string, keys: string[] | null): HeardEvent => ({ at, event: "change", id: version, version, keys });
const committed = (end: string, ...keys: string[]): CommittedTransaction => ({ end, keys: new Set(keys), tick: null });

const heard = listener([
  { at: 1, event: "version", id: "s1", version: "s1", keys: null },
  change(2, "s1@0/20", ["1", "2"]),
  change(3, "s2", null),
  change(4, "s2@0/40", ["5"]),
]);
const snapshots = new Map([["s2", "0/30"]]);

describe("checkAnnounced: every committed transaction heard by a listener", () => {
  test("keys in the first change event past the commit, or a refresh at a snapshot's position, announce it", () => {
    const a = checkAnnounced(heard, [committed("0/10", "1"), committed("0/20", "2"), committed("0/25", "9"), committed("0/40", "5")], snapshots);
    expect(a).toMatchObject({ transactions: 4, byKeys: 3, byRefresh: 1, problemCount: 0, heardAt: [2, 2, 3, 4] });
  });

  test("a key missing from that event, and a commit past every event, are not announced", () => {
    const a = checkAnnounced(heard, [committed("0/10", "3"), committed("0/40", "6"), committed("0/41", "5")], snapshots);
    expect(a.problemCount).toBe(3);
    expect(a.heardAt).toEqual([null, null, null]);
    // a later event naming the key does not count: the batch holding the commit was the first past it
    expect(checkAnnounced(heard, [committed("0/10", "5")], snapshots).problemCount).toBe(1);
  });

  test("a bare snapshot id the manifest never named, and a change event older than the one before, are problems", () => {
    expect(checkAnnounced(heard, [], new Map()).problems[0]).toContain("neither <snapshot>@<LSN> nor a snapshot");
    const back = listener([change(1, "s1@0/40", ["1"]), change(2, "s1@0/30", ["2"])]);
    expect(checkAnnounced(back, [], snapshots).problems[0]).toContain("went back");
  });

  test("versionLsn: the LSN after @, else the snapshot's from the manifest", () => {
    expect(versionLsn("abc@1/FF", snapshots)).toBe("1/FF");
    expect(versionLsn("s2", snapshots)).toBe("0/30");
    expect(versionLsn("s3", snapshots)).toBeNull();
  });
});
