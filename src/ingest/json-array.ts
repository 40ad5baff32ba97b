/**
 * The JSON-array reader (read.ts): a scanner that finds each top-level object of `[{…}, …]`
 * across chunks, then JSON.parse and the shared record validation per object.
 */
import { type ColumnsBuilder, type FormatParser, IngestError, addJsonRecord, parseErrorText } from "./records.ts";

// JSON-array scanner states.
const BEFORE_ARRAY = 0;
const BEFORE_FIRST = 1; // after '[': a value or ']'
const BEFORE_VALUE = 2; // after ',': a value
const IN_OBJECT = 3;
const AFTER_VALUE = 4; // ',' or ']'
const AFTER_ARRAY = 5;

/** The name of the JSON type whose value starts with char code `c`, for an error reason. */
function jsonTypeAt(c: number): string | null {
  // '[' '"' 't' 'f' 'n' '-' '0'..'9'
  if (c === 91) return "an array";
  if (c === 34) return "a string";
  if (c === 116 || c === 102) return "a boolean";
  if (c === 110) return "null";
  if (c === 45 || (c >= 48 && c <= 57)) return "a number";
  return null;
}

/**
 * A JSON array of objects, streamed: a small scanner finds each top-level object's extent
 * (tracking strings, escapes and nesting) and JSON.parse parses just that object, so the whole
 * array is never held as one string. A record's line is the line of its opening `{`.
 */
export function jsonArrayParser(file: string, columns: ColumnsBuilder): FormatParser {
  let state = BEFORE_ARRAY;
  // Unconsumed text: inside an object it starts at the object's '{', else it is empty.
  let rest = "";
  // Where scanning resumes in `rest` (inside an object).
  let scanFrom = 0;
  // Line of the scan position (newlines outside strings are counted), and of the open object's '{'.
  let line = 1;
  let objectLine = 1;
  // Inside an object: nesting depth and whether the scan position is inside a string.
  let depth = 0;
  let inString = false;

  const malformed = (lineNo: number, what: string): never => {
    throw new IngestError(file, lineNo, `malformed JSON: ${what}`);
  };

  return {
    push(text) {
      const s = rest.length === 0 ? text : rest + text;
      const n = s.length;
      let i = state === IN_OBJECT ? scanFrom : 0;
      // Start of the open object in `s` (0 when it was carried over in `rest`).
      let objectStart = 0;
      while (i < n) {
        if (state === IN_OBJECT) {
          // Scan the object body; strings are skipped with indexOf.
          let closed = false;
          while (i < n) {
            if (inString) {
              const q = s.indexOf('"', i);
              if (q < 0) {
                i = n;
                break;
              }
              // A quote preceded by an odd number of backslashes is escaped.
              let backslashes = 0;
              for (let k = q - 1; k > objectStart && s.charCodeAt(k) === 92; k--) backslashes++;
              i = q + 1;
              if ((backslashes & 1) === 0) inString = false;
              continue;
            }
            const c = s.charCodeAt(i++);
            // '"' '{' '[' '}' ']' '\n'
            if (c === 34) inString = true;
            else if (c === 123 || c === 91) depth++;
            else if (c === 125 || c === 93) {
              if (--depth === 0) {
                closed = true;
                break;
              }
            } else if (c === 10) line++;
          }
          if (!closed) break;
          const objectText = s.slice(objectStart, i);
          let value: unknown;
          try {
            value = JSON.parse(objectText);
          } catch (error) {
            malformed(objectLine, parseErrorText(error));
          }
          addJsonRecord(file, columns, value, objectLine, objectText);
          state = AFTER_VALUE;
          continue;
        }
        const c = s.charCodeAt(i);
        // Whitespace between tokens: '\n', then ' ' '\t' '\r'.
        if (c === 10) {
          line++;
          i++;
          continue;
        }
        if (c === 32 || c === 9 || c === 13) {
          i++;
          continue;
        }
        if (state === BEFORE_ARRAY) {
          // '['
          if (c !== 91) malformed(line, `expected '[' to open an array of user objects (got ${JSON.stringify(s.charAt(i))})`);
          state = BEFORE_FIRST;
          i++;
        } else if (state === BEFORE_FIRST || state === BEFORE_VALUE) {
          if (c === 123) {
            // '{': an object starts.
            state = IN_OBJECT;
            objectStart = i;
            objectLine = line;
            depth = 1;
            inString = false;
            i++;
            continue;
          }
          // ']' closes the array right after '[' (an empty array); a trailing comma is an error.
          if (c === 93 && state === BEFORE_FIRST) {
            state = AFTER_ARRAY;
            i++;
            continue;
          }
          const type = jsonTypeAt(c);
          if (type !== null) throw new IngestError(file, line, `record must be a JSON object (got ${type})`);
          malformed(line, `unexpected ${JSON.stringify(s.charAt(i))} where an array element was expected`);
        } else if (state === AFTER_VALUE) {
          // ',' or ']'
          if (c === 44) state = BEFORE_VALUE;
          else if (c === 93) state = AFTER_ARRAY;
          else malformed(line, `expected ',' or ']' after an array element (got ${JSON.stringify(s.charAt(i))})`);
          i++;
        } else {
          malformed(line, `unexpected ${JSON.stringify(s.charAt(i))} after the end of the array`);
        }
      }
      // Keep only the open object's text.
      if (state === IN_OBJECT) {
        rest = objectStart === 0 ? s : s.slice(objectStart);
        scanFrom = i - objectStart;
      } else {
        rest = "";
      }
    },
    finish() {
      if (state === IN_OBJECT) malformed(objectLine, "unexpected end of file inside an object");
      // Only whitespace: an empty dataset.
      if (state === BEFORE_ARRAY) return;
      if (state !== AFTER_ARRAY) malformed(line, "unexpected end of file: the array is not closed with ']'");
    },
    nextLine() {
      return line;
    },
  };
}

