/**
 * Test helper: an RFC 4180 reader written for the tests, independent of the exporter
 * (src/store/rows-export.ts): fields separated by commas, records ended by CRLF, a quoted field
 * with its doubled quotes undone.
 */

/** One field as read: its text, and whether it was quoted (null and "" differ only by that). */
export interface CsvField {
  text: string;
  quoted: boolean;
}

/**
 * The records of `text` (the header first, when there is one).
 * @throws Error when a record does not end with CRLF
 */
export function parseCsv(text: string): CsvField[][] {
  const records: CsvField[][] = [];
  let fields: CsvField[] = [];
  let i = 0;
  while (i < text.length) {
    let value = "";
    let quoted = false;
    if (text[i] === '"') {
      quoted = true;
      i++;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') {
          value += '"';
          i += 2;
        } else if (text[i] === '"') {
          i++;
          break;
        } else value += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== "," && text[i] !== "\r") value += text[i++];
    }
    fields.push({ text: value, quoted });
    if (text[i] === ",") i++;
    else {
      if (text.slice(i, i + 2) !== "\r\n") throw new Error(`CSV record ${records.length + 1} does not end with CRLF at ${i}`);
      i += 2;
      records.push(fields);
      fields = [];
    }
  }
  return records;
}

/** The records of `text` as rows of field texts. */
export function csvRows(text: string): string[][] {
  return parseCsv(text).map((fields) => fields.map((f) => f.text));
}
