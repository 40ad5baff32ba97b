import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  DAY_MS,
  daysFromCivil,
  explainDateTime,
  explainNumberText,
  formatDate,
  formatDateTime,
  parseBooleanText,
  parseDate,
  parseDateTime,
  parseDateTimeUtf8,
  parseDateUtf8,
  parseNumberText,
} from "../../src/schema/values.ts";

describe("dates", () => {
  test("day numbers agree with Date.UTC over 0000-9999", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }), (y, m, d) => {
        const t = new Date(0);
        t.setUTCFullYear(y, m - 1, d);
        expect(daysFromCivil(y, m, d) * DAY_MS).toBe(t.getTime());
      }),
    );
  });

  test("YYYY-MM-DD round-trips; anything else is refused", () => {
    for (const text of ["1970-01-01", "2024-02-29", "0001-12-31", "9999-12-31", "1969-07-20"]) expect(formatDate(parseDate(text))).toBe(text);
    for (const text of ["2023-02-29", "2024-13-01", "2024-00-10", "2024-04-31", "24-01-01", "2024-1-1", " 2024-01-01", "2024-01-01T00:00:00Z", ""]) {
      expect(parseDate(text)).toBeNaN();
    }
  });
});

describe("date-times", () => {
  test("every form docs/api.md names, to the same instant", () => {
    const instant = Date.parse("2024-03-01T12:34:56.789Z");
    for (const text of ["2024-03-01T12:34:56.789Z", "2024-03-01 12:34:56.789Z", "2024-03-01T12:34:56.789", "2024-03-01T14:34:56.789+02", "2024-03-01T14:34:56.789+0200", "2024-03-01T10:04:56.789-02:30", "2024-03-01T12:34:56.789000Z"]) {
      expect(parseDateTime(text)).toBe(instant);
    }
    expect(parseDateTime("2024-03-01 00:00:00")).toBe(Date.parse("2024-03-01T00:00:00Z"));
    expect(parseDateTime("2024-03-01T00:00")).toBe(Date.parse("2024-03-01T00:00:00Z"));
    expect(formatDateTime(instant)).toBe("2024-03-01T12:34:56.789Z");
  });

  test("refused: sub-millisecond fractions, impossible dates and times, other shapes", () => {
    for (const text of ["2024-03-01T12:34:56.7891Z", "2024-02-30T00:00:00Z", "2024-03-01T24:00:00Z", "2024-03-01T12:60:00Z", "2024-03-01T12:00:60Z", "2024-03-01T12:00:00+24:00", "2024-03-01", "2024-03-01T12Z", "yesterday"]) {
      expect(parseDateTime(text)).toBeNaN();
    }
    expect(explainDateTime("2024-03-01T12:34:56.7891Z")).toContain("would be rounded");
  });

  test("PostgreSQL's UTC spelling (+00:00, a fraction of 0–6 digits) and Z with 1–9 digits: the fast path agrees with the grammar", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }),
        fc.integer({ min: 0, max: 9 }),
        fc.constantFrom("Z", "+00:00", "+00", "+0000", "-00:00"),
        fc.integer({ min: 0, max: 999 }),
        (instant, digits, zone, extra) => {
          const iso = new Date(instant).toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ
          const seconds = iso.slice(0, 19);
          const ms = iso.slice(20, 23);
          // the fraction cut or padded to `digits`; digits past the third non-zero when `extra` says so
          let fraction = `${ms}000000`.slice(0, digits);
          if (digits > 3 && extra % 2 === 1) fraction = `${fraction.slice(0, digits - 1)}${1 + (extra % 9)}`;
          const text = `${seconds}${digits > 0 ? `.${fraction}` : ""}${zone}`;
          const kept = digits >= 3 ? Number(ms) : Number(ms.slice(0, digits).padEnd(3, "0"));
          const finer = digits > 3 && extra % 2 === 1;
          const expected = finer ? Number.NaN : Date.parse(`${seconds}Z`) + kept;
          expect(parseDateTime(text)).toBe(expected);
          // the same text with a space for the T takes the general grammar alone
          expect(parseDateTime(text.replace("T", " "))).toBe(expected);
        },
      ),
    );
    for (const text of ["2024-03-01T12:34:56.Z", "2024-03-01T12:34:56.1234567890Z", "2024-03-01T12:34:56+00:0", "2024-03-01T12:34:56.5+00:00Z", "2024-03-01T1a:34:56Z"]) {
      expect(parseDateTime(text)).toBeNaN();
    }
    expect(parseDateTime("2024-03-01T12:34:56+00:00")).toBe(Date.parse("2024-03-01T12:34:56Z"));
    expect(parseDateTime("1969-12-31T23:59:59.999+00:00")).toBe(-1);
  });

  test("toISOString output of any instant in 0000-9999 parses back to it", () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), (ms) => {
        expect(parseDateTime(new Date(ms).toISOString())).toBe(ms);
      }),
    );
  });
});

describe("numbers and booleans in text (CSV)", () => {
  test("the JSON number grammar, exactly", () => {
    expect([parseNumberText("0"), parseNumberText("-0"), parseNumberText("1e3"), parseNumberText("-12.5"), parseNumberText("9007199254740992")]).toEqual([0, -0, 1000, -12.5, 2 ** 53]);
    for (const text of ["0x10", "0b101", "0o7", " 5 ", "5 ", "1_000", "+5", ".5", "5.", "Infinity", "NaN", "", "1e999", "01", "9007199254740993", "9007199254740992.5", "1e16"]) {
      expect(parseNumberText(text)).toBeNaN();
    }
    expect(explainNumberText("0x10")).toBe('"0x10" is not a number in JSON syntax');
    expect(explainNumberText("9007199254740993")).toBe('"9007199254740993" is beyond ±2^53 and would be rounded');
    expect(parseNumberText("9.007199254740992e15")).toBe(2 ** 53);
  });

  test("true and false in any case", () => {
    expect(["true", "TRUE", "False", "false"].map(parseBooleanText)).toEqual([1, 1, 0, 0]);
    expect(["yes", "1", "", " true"].map(parseBooleanText)).toEqual([-1, -1, -1, -1]);
  });
});

describe("the byte readers agree with the string ones", () => {
  test("parseDateUtf8 and parseDateTimeUtf8 give what parseDate and parseDateTime give", () => {
    const encoder = new TextEncoder();
    const digits = fc.constantFrom(..."0123456789".split(""));
    const shaped = fc
      .tuple(fc.array(fc.oneof(digits, fc.constantFrom("-", ":", "T", " ", ".", "Z", "+", "é", "x")), { minLength: 8, maxLength: 32 }))
      .map(([parts]) => parts.join(""));
    const real = fc.date({ noInvalidDate: true, min: new Date(Date.UTC(0, 0, 1)), max: new Date(Date.UTC(9999, 11, 31)) });
    const text = fc.oneof(
      shaped,
      real.map((d) => d.toISOString()),
      real.map((d) => d.toISOString().slice(0, 10)),
      real.map((d) => d.toISOString().replace("Z", "+00:00")),
      real.map((d) => d.toISOString().replace(".", ".000").replace("Z", "")),
      real.map((d) => d.toISOString().replace("T", " ").replace("Z", "-05:30")),
      fc.string({ maxLength: 30 }),
    );
    fc.assert(
      fc.property(text, (t) => {
        const bytes = encoder.encode(`<${t}>`);
        expect(parseDateUtf8(bytes, 1, bytes.length - 1)).toEqual(parseDate(t));
        expect(parseDateTimeUtf8(bytes, 1, bytes.length - 1)).toEqual(parseDateTime(t));
      }),
      { numRuns: 2000 },
    );
  });
});
