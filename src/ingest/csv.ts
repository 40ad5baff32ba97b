/**
 * The CSV reader (read.ts): RFC 4180 with a header row naming the seed's four columns (any order,
 * case-insensitive) and any others, each another column (docs/api.md "Columns beyond the four").
 */
import { statusCode } from "../generate/record.ts";
import { type RawColumn, addTextValue } from "./raw-column.ts";
import { type ColumnsBuilder, type FormatParser, IngestError, MAX_ID_MAGNITUDE, STATUS_LIST, countNewlines, idRangeReason, loneSurrogateReason, show } from "./records.ts";

/** The JSON number grammar (RFC 8259 §6), which a CSV id must match (docs/api.md: "CSV too"). */
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** CSV columns the header must name. */
const CSV_COLUMNS = ["id", "name", "email", "status"] as const;

/**
 * CSV per RFC 4180 with a header row; see the module comment for the rules. A record's line is
 * the physical line where it starts (quoted fields may span lines).
 */
export function csvParser(file: string, columns: ColumnsBuilder): FormatParser {
  let rest = "";
  // Line number at the start of `rest`.
  let line = 1;
  // Column index of id, name, email, status; -1 until the header is read.
  let idCol = -1;
  let nameCol = -1;
  let emailCol = -1;
  let statusCol = -1;
  let headerWidth = 0;
  // The columns beyond the four: header index and raw column of each.
  let extraCols: { index: number; column: RawColumn }[] = [];
  const fields: string[] = [];

  const fail = (lineNo: number, reason: string): never => {
    throw new IngestError(file, lineNo, reason);
  };

  /** Handles one complete record (its fields are in `fields`). */
  const record = (lineNo: number): void => {
    const width = fields.length;
    // An empty or blank (whitespace-only) line is skipped.
    if (width === 1 && (fields[0] === "" || fields[0].trim() === "")) return;
    if (idCol < 0) {
      const index = [-1, -1, -1, -1];
      for (let f = 0; f < width; f++) {
        const key = fields[f].trim().toLowerCase();
        const c = (CSV_COLUMNS as readonly string[]).indexOf(key);
        if (c < 0) continue;
        if (index[c] >= 0) fail(lineNo, `CSV header names column "${key}" twice`);
        index[c] = f;
      }
      for (let c = 0; c < 4; c++) {
        if (index[c] < 0) fail(lineNo, `CSV header must name the columns id, name, email, status (missing "${CSV_COLUMNS[c]}")`);
      }
      const seen = new Set<string>();
      extraCols = [];
      for (let f = 0; f < width; f++) {
        if (index.includes(f)) continue;
        const id = fields[f].trim();
        if (seen.has(id)) fail(lineNo, `CSV header names column "${id}" twice`);
        seen.add(id);
        extraCols.push({ index: f, column: columns.extraColumn(file, id, lineNo) });
      }
      idCol = index[0];
      nameCol = index[1];
      emailCol = index[2];
      statusCol = index[3];
      headerWidth = width;
      return;
    }
    if (width !== headerWidth) fail(lineNo, `CSV row has ${width} fields, header has ${headerWidth}`);
    const idText = fields[idCol];
    // Exactly the JSON number grammar: `Number` alone would also take hex, blanks, "Infinity", ".5".
    if (!JSON_NUMBER.test(idText)) fail(lineNo, `id must be a number in JSON syntax (got ${show(idText)})`);
    const id = Number(idText);
    if (!Number.isFinite(id)) fail(lineNo, `id must be a finite number (got ${show(idText)})`);
    if (id >= MAX_ID_MAGNITUDE || id <= -MAX_ID_MAGNITUDE) {
      const reason = idRangeReason(id, idText);
      if (reason !== null) fail(lineNo, reason);
    }
    const statusText = fields[statusCol];
    let code = statusText === "active" ? 0 : statusText === "inactive" ? 1 : statusCode(statusText);
    if (code < 0) fail(lineNo, `status must be one of ${STATUS_LIST} (got ${show(statusText)})`);
    for (const { index, column } of extraCols) {
      const value = fields[index];
      if (!value.isWellFormed()) fail(lineNo, loneSurrogateReason(column.id, value));
      addTextValue(column, value);
    }
    columns.add(id, fields[nameCol], fields[emailCol], code, lineNo);
  };

  /**
   * Parses records from `s`; returns the index where the first incomplete record starts
   * (s.length when all were complete). `final`: no more text follows.
   */
  const parse = (s: string, final: boolean): number => {
    const n = s.length;
    let pos = 0;
    // Cached positions of the next ',' and '\n' at or after pos (-1: none left).
    let nextComma = s.indexOf(",");
    let nextNewline = s.indexOf("\n");
    while (pos < n) {
      const recordStart = pos;
      const recordLine = line;
      fields.length = 0;
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
          pos = close + 1;
          const c = s.charCodeAt(pos);
          if (c === 44) {
            // ','
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
          fail(recordLine + newlinesInRecord, `unexpected ${JSON.stringify(s.charAt(pos))} after a closing quote (expected ',' or end of line)`);
        }
        // An unquoted field runs to the next ',' or '\n'.
        if (nextComma >= 0 && nextComma < pos) nextComma = s.indexOf(",", pos);
        if (nextNewline >= 0 && nextNewline < pos) nextNewline = s.indexOf("\n", pos);
        let end: number;
        let endsRecord: boolean;
        if (nextComma >= 0 && (nextComma < nextNewline || nextNewline < 0)) {
          end = nextComma;
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
        pos = end + 1;
        if (endsRecord) {
          complete = true;
          break;
        }
        if (pos >= n && !final) return recordStart;
        if (pos >= n) {
          // A trailing ',' at end of file: one more, empty field.
          fields.push("");
          complete = true;
          break;
        }
      }
      if (!complete) return recordStart;
      // The record's own line ends (one per LF that ended it) advance the line count.
      record(recordLine);
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

