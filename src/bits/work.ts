/**
 * Work that can pause: a computation written as a generator that yields (no value) wherever it
 * may be suspended — between the pieces of a long loop, between the steps of a plan — and returns
 * its result. One body of code serves both callers: a cheap query runs its work to the end at once
 * ({@link finish}); an expensive one is run a bounded slice at a time by the query scheduler
 * (engine/scheduler.ts), which resumes it between event-loop turns, so that the requests read in
 * the meantime are answered without waiting for it, and which stops it (`return()`) when its
 * client goes away or its time is up.
 *
 * The loops themselves stay plain functions over an index range (a generator's body is compiled
 * less tightly than a plain function's); the generator calls them piece by piece.
 */

/** A computation that may pause between pieces; yields nothing, returns T. */
export type Work<T> = Generator<void, T, void>;

/**
 * Rows (or words, postings, candidates) a loop handles between two pause points: at a few
 * nanoseconds each, well under a millisecond of work, so that a pause is never far away while the
 * overhead of pausing (one generator step) stays negligible.
 */
export const PIECE = 1 << 16;

/** Runs `work` to its end at once, through every pause point; returns its result (or throws what it throws). */
export function finish<T>(work: Work<T>): T {
  let step = work.next();
  while (step.done !== true) step = work.next();
  return step.value;
}

/** Work that is already done: `value` at once (for a caller that takes work). */
export function* done<T>(value: T): Work<T> {
  return value;
}
