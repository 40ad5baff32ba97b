/**
 * The CSV reader (read.ts): RFC 4180 with a header row naming the fields, each a column in header
 * order (docs/api.md "Any users table: from your data to columns"), and a delimiter of choice (`,` by default). Empty fields
 * follow PostgreSQL's CSV rule: an unquoted empty field is null, a quoted one (`""`) is the empty
 * string.
 */
import { addTextValue } from "./raw-column.ts";
import type { RawColumn } from "../schema/raw-column.ts";
import { MAX_VALUE_BYTES } from "./limits.ts";
import { type ColumnsBuilder, type FormatParser, IngestError, countNewlines, show, valueTooLongReason } from "./records.ts";

/** The delimiter a CSV is read with unless told otherwise. */
export const DEFAULT_DELIMITER = ",";

/** The delimiters a header that lacks the key is tried with, to suggest one. */
const OTHER_DELIMITERS = [",", ";", "\t", "|"];

/** A delimiter as a message names it: `","`, or `tab`. */
export function delimiterName(delimiter: string): string {
  return delimiter === "\t" ? "tab" : JSON.stringify(delimiter);
}

/**
 * Why `delimiter` cannot delimit CSV fields, or null: it must be one character, and not a quote,
 * CR or LF.
 */
export function delimiterProblem(delimiter: string): string | null {
  if (delimiter.length !== 1) return `the delimiter must be one character (got ${JSON.stringify(delimiter)})`;
  if (delimiter === '"' || delimiter === "\r" || delimiter === "\n") return `the delimiter cannot be ${JSON.stringify(delimiter)}`;
  return null;
}

/** The fields of a header line split on `delimiter`, trimmed and unquoted (for a suggestion only: quoted delimiters are not honoured). */
function splitHeader(text: string, delimiter: string): string[] {
  return text
    .replace(/\r?\n$/, "")
    .split(delimiter)
    .map((f) => f.trim().replace(/^"(.*)"$/, "$1"));
}

/**
 * The reason a header lacks the key: the delimiter it was read with and its fields, and, when
 * another delimiter would split it into fields that hold the key, that delimiter; else a field
 * equal to the key but for case, as a `--key`.
 */
function missingKeyReason(key: string, delimiter: string, fields: readonly string[], headerText: string): string {
  const listed = fields.length > 8 ? `${fields.slice(0, 8).map((f) => show(f)).join(", ")}, …` : fields.map((f) => show(f)).join(", ");
  let reason = `the CSV header has no field ${show(key)} (the key), read with the delimiter ${delimiterName(delimiter)}: its fields are ${listed}`;
  for (const other of OTHER_DELIMITERS) {
    if (other === delimiter || !headerText.includes(other)) continue;
    if (splitHeader(headerText, other).includes(key)) return `${reason}; split on ${delimiterName(other)} it has ${show(key)}: give --delimiter ${other === "\t" ? "tab" : `'${other}'`}`;
  }
  const sameButCase = fields.find((f) => f.toLowerCase() === key.toLowerCase());
  if (sameButCase !== undefined) reason += `; to key the table by ${show(sameButCase)}, give --key ${sameButCase}`;
  return reason;
}

/** Options of {@link csvParser}. */
export interface CsvOptions {
  /** The field delimiter, one character (default `,`; checked by {@link delimiterProblem}). */
  delimiter?: string;
  /** The key column: the header must name it (the error then says which delimiter was assumed). Unchecked when absent. */
  key?: string;
}

/**
 * CSV per RFC 4180 with a header row; see the module comment for the rules. A record's line is
 * the physical line where it starts (quoted fields may span lines). Header names are trimmed.
 */
export function csvParser(file: string, columns: ColumnsBuilder, options: CsvOptions = {}): FormatParser {
  const delimiter = options.delimiter ?? DEFAULT_DELIMITER;
  const problem = delimiterProblem(delimiter);
  if (problem !== null) throw new RangeError(problem);
  const delimiterCode = delimiter.charCodeAt(0);
  let rest = "";
  // Line number at the start of `rest`.
  let line = 1;
  // -1 until the header is read, then the header's width.
  let headerWidth = -1;
  // Per header position: its raw column, or null for a field left out.
  let targets: (RawColumn | null)[] = [];
  const fields: string[] = [];
  // Per field of the record being read: 1 when it was quoted.
  const quoted: number[] = [];

  const fail = (lineNo: number, reason: string): never => {
    throw new IngestError(file, lineNo, reason);
  };

  /** Reads the header (its fields are in `fields`; `text` is its raw text). */
  const header = (lineNo: number, text: string): void => {
    const width = fields.length;
    const names = fields.map((f) => f.trim());
    const seen = new Set<string>();
    for (const name of names) {
      if (seen.has(name)) fail(lineNo, `the CSV header names the field ${show(name)} twice`);
      seen.add(name);
    }
    if (options.key !== undefined && !seen.has(options.key)) fail(lineNo, missingKeyReason(options.key, delimiter, names, text));
    targets = names.map((name) => columns.column(name, lineNo));
    headerWidth = width;
  };

  /** Handles one complete record (its fields are in `fields`, its raw text is `s[from..to)`). */
  const record = (lineNo: number, s: string, from: number, to: number): void => {
    const width = fields.length;
    // An empty or blank line is skipped.
    if (width === 1 && quoted[0] === 0 && fields[0].trim() === "") return;
    if (headerWidth < 0) return header(lineNo, s.slice(from, to));
    if (width !== headerWidth) fail(lineNo, `CSV row has ${width} fields, the header has ${headerWidth}`);
    for (let f = 0; f < width; f++) {
      const column = targets[f];
      if (column === null) continue;
      // decoded from well-formed UTF-8: no lone surrogate to check for
      const bytes = addTextValue(column, fields[f], quoted[f] === 1);
      if (bytes > MAX_VALUE_BYTES) fail(lineNo, valueTooLongReason(column.id, bytes));
    }
    columns.endRecord(lineNo);
  };

  /**
   * Parses records from `s`; returns the index where the first incomplete record starts
   * (s.length when all were complete). `final`: no more text follows.
   */
  const parse = (s: string, final: boolean): number => {
    const n = s.length;
    let pos = 0;
    // Cached positions of the next delimiter and '\n' at or after pos (-1: none left).
    let nextDelimiter = s.indexOf(delimiter);
    let nextNewline = s.indexOf("\n");
    while (pos < n) {
      const recordStart = pos;
      const recordLine = line;
      fields.length = 0;
      quoted.length = 0;
      let newlinesInRecord = 0;
      let complete = false;
      // One field per iteration.
      for (;;) {
        if (s.charCodeAt(pos) === 34) {
          // '"': a quoted field; "" inside is a literal quote.
          let from = pos + 1;
          let hasDoubled = false;
          let close = -1;
          for (;;) {
            const q = s.indexOf('"', from);
            if (q < 0) break;
            if (s.charCodeAt(q + 1) === 34) {
              hasDoubled = true;
              from = q + 2;
              continue;
            }
            // A quote at the very end may be the first half of "" continued in the next chunk.
            if (q + 1 === n && !final) break;
            close = q;
            break;
          }
          if (close < 0) {
            if (final) fail(recordLine, "unterminated quoted field (missing closing '\"')");
            return recordStart;
          }
          const raw = s.slice(pos + 1, close);
          newlinesInRecord += countNewlines(s, pos + 1, close);
          fields.push(hasDoubled ? raw.replaceAll('""', '"') : raw);
          quoted.push(1);
          pos = close + 1;
          const c = s.charCodeAt(pos);
          if (c === delimiterCode) {
            pos++;
            continue;
          }
          if (c === 10) {
            // '\n'
            pos++;
            complete = true;
            break;
          }
          if (c === 13 && s.charCodeAt(pos + 1) === 10) {
            // '\r\n'
            pos += 2;
            complete = true;
            break;
          }
          if (pos >= n) {
            if (!final) return recordStart;
            complete = true;
            break;
          }
          if (c === 13 && pos + 1 >= n && !final) return recordStart;
          fail(recordLine + newlinesInRecord, `unexpected ${JSON.stringify(s.charAt(pos))} after a closing quote (expected the delimiter ${delimiterName(delimiter)} or the end of the line)`);
        }
        // An unquoted field runs to the next delimiter or '\n'.
        if (nextDelimiter >= 0 && nextDelimiter < pos) nextDelimiter = s.indexOf(delimiter, pos);
        if (nextNewline >= 0 && nextNewline < pos) nextNewline = s.indexOf("\n", pos);
        let end: number;
        let endsRecord: boolean;
        if (nextDelimiter >= 0 && (nextDelimiter < nextNewline || nextNewline < 0)) {
          end = nextDelimiter;
          endsRecord = false;
        } else if (nextNewline >= 0) {
          end = nextNewline;
          endsRecord = true;
        } else {
          if (!final) return recordStart;
          end = n;
          endsRecord = true;
        }
        // Strip the CR of a CRLF.
        const valueEnd = endsRecord && end > pos && s.charCodeAt(end - 1) === 13 ? end - 1 : end;
        const value = s.slice(pos, valueEnd);
        if (value.includes('"')) fail(recordLine + newlinesInRecord, `quote inside an unquoted field (${show(value)}); quote the whole field`);
        if (value.includes("\r")) fail(recordLine + newlinesInRecord, "bare carriage return outside quotes (line ends must be LF or CRLF)");
        fields.push(value);
        quoted.push(0);
        pos = end + 1;
        if (endsRecord) {
          complete = true;
          break;
        }
        if (pos >= n && !final) return recordStart;
        if (pos >= n) {
          // A trailing delimiter at end of file: one more, empty field.
          fields.push("");
          quoted.push(0);
          complete = true;
          break;
        }
      }
      if (!complete) return recordStart;
      // The record's own line ends (one per LF that ended it) advance the line count.
      record(recordLine, s, recordStart, pos);
      line = recordLine + newlinesInRecord + (pos <= n && s.charCodeAt(pos - 1) === 10 ? 1 : 0);
    }
    return n;
  };

  return {
    push(text) {
      const s = rest.length === 0 ? text : rest + text;
      const consumed = parse(s, false);
      rest = consumed === 0 ? s : s.slice(consumed);
    },
    finish() {
      if (rest.length > 0) parse(rest, true);
      rest = "";
    },
    nextLine() {
      return line + countNewlines(rest, 0, rest.length);
    },
  };
}

