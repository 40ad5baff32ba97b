/**
 * A role's filter model compiled into the engine's predicate (docs/api.md "Access control"):
 * the model, its claim references replaced, read by the parser of POST /api/users bodies
 * (query/post.ts), so a role's filter means exactly what the same AG Grid filter model sent by a
 * client means, and runs on the engine's ordinary filter path (cached by its predicate).
 */
import { ProblemError } from "../query/errors.ts";
import { parsePostBody } from "../query/post.ts";
import type { Predicate } from "../query/types.ts";
import type { Schema } from "../schema/kinds.ts";

/** One problem of a filter model: where (JSON pointer tokens below the model) and what. */
export interface FilterProblem {
  path: string[];
  detail: string;
}

/** The tokens of a JSON pointer (RFC 6901), `~1` and `~0` undone. */
function pointerTokens(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/**
 * Compiles an AG Grid filter model (no claim references left) over the whole schema (a role's
 * filter may test a column the role does not see).
 * @returns the predicate (null for a model that filters nothing, `{}`), or every problem found
 * @throws what the parser throws besides a bad body (never for a model object)
 */
export function compileFilterModel(model: Record<string, unknown>, schema: Schema): { filter: Predicate | null } | { problems: FilterProblem[] } {
  try {
    return { filter: parsePostBody({ filterModel: model }, 1, schema, { window: false, sort: false }).query.filter };
  } catch (error) {
    if (!(error instanceof ProblemError) || error.code !== "BAD_BODY") throw error;
    return {
      problems: error.errors.map((e) => {
        const tokens = pointerTokens("pointer" in e ? e.pointer : "");
        // the parser's pointers are into the body: drop its leading "filterModel"
        return { path: tokens[0] === "filterModel" ? tokens.slice(1) : tokens, detail: e.detail };
      }),
    };
  }
}
