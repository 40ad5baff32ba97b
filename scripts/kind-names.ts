/**
 * Finds the code lines that test a column kind by its name (`kind === "number"`,
 * `spec.kind !== "text"`, `seen.get(id) === "enum"`, `case "date":`,
 * `["enum", "boolean"].includes(kind)`) outside the folders that define the kinds: behaviour that
 * belongs in a kind's module (README.md "Layout": src/kinds, one module per column kind) left
 * elsewhere; test/kind-names.test.ts holds the bound. A test is an equality comparison of a
 * kind's name with any expression, a `case` of a kind's name, or an `includes` in a list of kind
 * names — but for the words other vocabularies share with the kinds' names: a `typeof`, a column
 * test's operator (`op`), an input format (`format`), an AG Grid filter type (`filterType`). Read
 * with the TypeScript parser (no type checking), so comments and strings never count.
 *
 * Usage: `bun scripts/kind-names.ts [SRC_DIR]` prints `file:line: text` for each line and the
 * count per top-level folder of SRC_DIR (default: this checkout's src/).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { COLUMN_KINDS } from "../src/schema/kinds.ts";

/** The folders whose code may name kinds: the kinds themselves, the schema, the demo page's client. */
export const KIND_FOLDERS = ["kinds", "schema", "demo"] as const;

/** One line that tests a kind by name: its file (relative to the source folder), 1-based line and text. */
export interface KindNameTest {
  file: string;
  line: number;
  text: string;
}

const KIND_NAMES = new Set<string>(COLUMN_KINDS);

/**
 * Names whose values share words with the kinds' names but are another vocabulary: a column
 * test's operator (`op`: "text"), an input format (`format`: "json"), an AG Grid filter type
 * (`filterType`: "number", "text", "date").
 */
const OTHER_VOCABULARIES = new Set(["op", "format", "filterType"]);

/** The last name of an expression: `kind`, `spec.kind` → `kind`; `inferKeyKind(x)` → `inferKeyKind`; `(a as T).kind` → `kind`; else null. */
function lastName(node: ts.Expression): string | null {
  let e: ts.Expression = node;
  for (;;) {
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e) || ts.isTypeAssertionExpression(e)) e = e.expression;
    else break;
  }
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  if (ts.isElementAccessExpression(e) && ts.isStringLiteral(e.argumentExpression)) return e.argumentExpression.text;
  if (ts.isCallExpression(e)) return lastName(e.expression);
  return null;
}

/** True for an expression a kind's name may be compared with: anything but a `typeof` and the {@link OTHER_VOCABULARIES}. */
function mayHoldKind(node: ts.Expression): boolean {
  if (ts.isTypeOfExpression(node)) return false;
  const name = lastName(node);
  return name === null || !OTHER_VOCABULARIES.has(name);
}

/** True for a string literal that is a kind's name. */
function isKindName(node: ts.Node): boolean {
  return (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && KIND_NAMES.has(node.text);
}

const EQUALITY = new Set([ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken]);

/** The lines of one file's source text that test a kind by name (1-based, ascending, each once). */
export function kindNameLines(text: string, fileName = "file.ts"): number[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ESNext, true, ts.ScriptKind.TS);
  const lines = new Set<number>();
  const mark = (node: ts.Node) => lines.add(source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1);
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
      if ((isKindName(node.right) && mayHoldKind(node.left)) || (isKindName(node.left) && mayHoldKind(node.right))) mark(node);
    } else if (ts.isSwitchStatement(node) && mayHoldKind(node.expression)) {
      for (const clause of node.caseBlock.clauses) if (ts.isCaseClause(clause) && isKindName(clause.expression)) mark(clause);
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === "includes") {
      const list = node.expression.expression;
      const argument = node.arguments[0];
      if (ts.isArrayLiteralExpression(list) && list.elements.some(isKindName) && argument !== undefined && mayHoldKind(argument)) mark(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...lines].sort((a, b) => a - b);
}

/** Every line of the `.ts` files under `srcDir`, outside {@link KIND_FOLDERS}, that tests a kind by name; by file, then line. */
export function kindNameTests(srcDir: string): KindNameTest[] {
  const out: KindNameTest[] = [];
  const files = (readdirSync(srcDir, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts") && !(KIND_FOLDERS as readonly string[]).includes(f.split("/")[0])).sort();
  for (const file of files) {
    const text = readFileSync(join(srcDir, file), "utf8");
    const lines = text.split("\n");
    for (const line of kindNameLines(text, file)) out.push({ file, line, text: lines[line - 1].trim() });
  }
  return out;
}

if (import.meta.main) {
  const srcDir = process.argv[2] ?? join(import.meta.dir, "../src");
  const found = kindNameTests(srcDir);
  const byFolder = new Map<string, number>();
  for (const t of found) {
    console.log(`${t.file}:${t.line}: ${t.text}`);
    const folder = t.file.includes("/") ? t.file.split("/")[0] : t.file;
    byFolder.set(folder, (byFolder.get(folder) ?? 0) + 1);
  }
  console.log(`\n${found.length} lines test a kind by name outside src/{${KIND_FOLDERS.join(",")}}: ${[...byFolder].map(([f, n]) => `${f} ${n}`).join(", ") || "none"}`);
}
