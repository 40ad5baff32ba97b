/**
 * The seven columns of a WIDE generated users table, added after the seed's four: sign-up
 * time, birthday, role, age, a verified flag, free-text notes and a JSON preferences object,
 * each with realistic distributions and nulls, for tests and benchmarks of snapshots with
 * more columns than four.
 *
 * Determinism: the values come from a seeded mulberry32 stream of their own (mixed with the
 * seed differently from the names' stream in users.ts), so widening a dataset never changes
 * its first four fields, and the same `count` and `seed` give the same values on every run.
 * The text pools are constants of this module (no faker): they hold accents, Cyrillic, Greek,
 * CJK, commas, quotes and one newline, so that CSV quoting and Unicode folding are exercised.
 */
import type { ColumnSpec } from "../schema/kinds.ts";
import type { Status, UserRecord } from "./record.ts";

/** The values of `role`, in declared order (the enum's sort order in a schema file). */
export const ROLE_VALUES = ["owner", "admin", "member", "viewer"] as const;

/** A role. */
export type Role = (typeof ROLE_VALUES)[number];

/** A value of a `prefs` key: a string, a boolean, a number, or a list of strings (`tags`). */
export type PrefValue = string | number | boolean | string[];

/** A user record of the wide table: the seed's four fields, then the seven below, in this order. */
export interface WideUserRecord extends UserRecord {
  /** Sign-up instant, `YYYY-MM-DDTHH:mm:ss.sssZ` (Date.prototype.toISOString), 2015-01-01 … 2025-12-31 UTC; never null. */
  created_at: string;
  /** Calendar day of birth, `YYYY-MM-DD` (ages 16–90 at 2025-01-01); null for about 6% of rows. */
  birthday: string | null;
  /** One of {@link ROLE_VALUES}: about 74% member, 17% viewer, 7% admin, 2% owner; never null. */
  role: Role;
  /** Age in whole years at 2025-01-01 computed from `birthday`; null exactly when `birthday` is. */
  age: number | null;
  /** About 80% true. */
  verified: boolean;
  /** Free text of 1–3 sentences (a few single paragraphs of up to ~500 characters); about 60% null, 5% "". */
  notes: string | null;
  /** 2–4 keys of theme, language, newsletter, pageSize, timezone, density, tags (in that order); about 10% null. */
  prefs: Record<string, PrefValue> | null;
}

/** The wide columns after the seed's four, in record order. */
export const WIDE_COLUMNS = ["created_at", "birthday", "role", "age", "verified", "notes", "prefs"] as const;

/**
 * The wide columns' kinds (docs/api.md "Any users table: the schema"), for a schema file
 * (`{"columns": WIDE_COLUMN_SPECS}`); the kinds inference would also find, with `role`'s
 * values declared instead of collated.
 */
export const WIDE_COLUMN_SPECS: readonly ColumnSpec[] = [
  { id: "created_at", kind: "datetime" },
  { id: "birthday", kind: "date" },
  { id: "role", kind: "enum", values: [...ROLE_VALUES] },
  { id: "age", kind: "number" },
  { id: "verified", kind: "boolean" },
  { id: "notes", kind: "text" },
  { id: "prefs", kind: "json" },
];

/** Makes the wide record of the next row from its seed fields; see {@link wideRecords}. */
export type WideRowMaker = (i: number, id: number, name: string, email: string, status: Status) => WideUserRecord;

/** Probability thresholds on a uniform u32 (value < threshold ⇒ event), as fractions of 2^32. */
const U32 = 4294967296;
const P_BIRTHDAY_NULL = Math.floor(0.06 * U32);
const P_VERIFIED = Math.floor(0.8 * U32);
const P_NOTES_NULL = Math.floor(0.6 * U32);
// Cumulative: null (60%), then "" (5%).
const P_NOTES_EMPTY = Math.floor(0.65 * U32);
const P_PREFS_NULL = Math.floor(0.1 * U32);

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** First sign-up day, 2015-01-01, in days since 1970-01-01. */
const SIGNUP_FIRST_DAY = Date.UTC(2015, 0, 1) / DAY_MS;
/** Sign-up days, 2015-01-01 … 2025-12-31 inclusive. */
const SIGNUP_DAYS = Date.UTC(2026, 0, 1) / DAY_MS - SIGNUP_FIRST_DAY;
/**
 * Sign-ups grow exponentially over the span: the rate at the end is e^k times the rate at the
 * start (about 4×), so later years hold more rows.
 */
const SIGNUP_GROWTH = 1.4;
/** Half-width of the triangular jitter around a row's place on the sign-up curve, in days. */
const SIGNUP_JITTER_DAYS = 60;
/** The day ages are taken at: 2025-01-01. */
const AGE_REFERENCE_MS = Date.UTC(2025, 0, 1);
const MIN_AGE = 16;
const MAX_AGE = 90;
/** Nobody signs up younger than this: an early sign-up's age today is at least this plus the years since. */
const MIN_SIGNUP_AGE = 13;
const MS_PER_YEAR = 365.25 * DAY_MS;

/** Relative weight of each age 16…90 (web-service users: most between 25 and 44). */
function ageWeight(age: number): number {
  if (age < 18) return 1.5;
  if (age < 25) return 2 + (age - 18) * 1.1;
  if (age < 35) return 9.5;
  if (age < 45) return 8;
  if (age < 55) return 6;
  if (age < 65) return 3.8;
  if (age < 75) return 1.8;
  return 0.8 - ((age - 75) * 0.65) / 15;
}

/** Relative sign-ups per UTC hour 0…23 (most users in Europe: busy from 07 to 21 UTC). */
const HOUR_WEIGHTS = [2, 1, 1, 1, 1, 2, 3, 5, 7, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 8, 7, 6, 4, 3];

/** Roles by weight, in thousandths: members most, owners few. */
const ROLE_WEIGHTS: readonly (readonly [Role, number])[] = [
  ["member", 740],
  ["viewer", 170],
  ["admin", 70],
  ["owner", 20],
];

/** Short note sentences: several languages and scripts; some with commas, quotes, one with a newline. */
const NOTE_SENTENCES: readonly string[] = [
  "Prefers email over phone.",
  "Asked for a copy of the last invoice.",
  "Moved to the Berlin office.",
  "Key account, handle with care.",
  "Uses the mobile app mostly.",
  "Requested a data export.",
  "Trial extended by 14 days.",
  'Said the new layout is "much better".',
  "Called about billing, resolved the same day.",
  "Out of office until March.",
  "Migrated from the legacy plan.",
  "VIP: reply within 24 hours.",
  "Reported a bug in the CSV export.",
  'Wants "dark mode" everywhere.',
  "Do not call before 9 a.m.",
  "Shipping address:\nHauptstraße 5, 10115 Berlin.",
  "Bevorzugt Rückruf am Nachmittag.",
  "Kündigung zum Monatsende angekündigt.",
  "Rechnung bitte an die Zentrale, z. Hd. Frau Müller.",
  "Préfère être contacté par e-mail.",
  "A demandé une réduction, refusée.",
  "Très satisfait du support « premium ».",
  "Cliente desde la primera versión.",
  "Pidió una factura con NIF, ya enviada.",
  "Prosi o kontakt po godzinie 15.",
  "Zgłosił błąd w eksporcie, naprawiony.",
  "Просит счёт на юрлицо.",
  "Перешёл с бесплатного тарифа.",
  "Связаться после отпуска, в понедельник.",
  "Дякує за швидку відповідь.",
  "Ζήτησε επιστροφή χρημάτων.",
  "Faturayı e-posta ile istiyor.",
  "Muốn nhận hóa đơn điện tử.",
  "請求書の再発行を希望。",
  "Naïve question about the café plan, answered.",
  "Account shared by two people, see ticket history.",
];

/** Long notes, one paragraph each (about 200 to 500 characters). */
const NOTE_PARAGRAPHS: readonly string[] = [
  "Long-standing customer since the first public release. Has reported several issues over the years, always with clear steps to reproduce, and once sent a patch for the date filter. Prefers written communication; meetings only when booked a week ahead. Renewal is handled by their finance team, not by the account owner.",
  'Escalation in Q3: the nightly import failed three times in a row because the source file switched to semicolons. We agreed on a workaround ("export as RFC 4180 CSV"), documented it in the shared wiki, and offered a credit of one month, which they declined. Follow up after the next major release to confirm the new importer handles it.',
  "Der Kunde nutzt die Tabelle täglich für die Auswertung der Außendienstberichte. Wünscht sich eine Filterung nach Kalenderwoche, größere Seiten (mindestens 500 Zeilen) und eine Exportfunktion, die Umlaute korrekt überträgt. Ansprechpartnerin für technische Fragen ist Frau Jäger, für Verträge Herr Öztürk.",
  "Клиент работает с таблицей каждый день: сортировка по дате регистрации, фильтр по роли и экспорт в CSV для бухгалтерии. Просит добавить поиск по заметкам и сохранение настроек между сессиями. Созвон раз в квартал, следующий — в начале апреля; контактное лицо — Ирина Соколова, отдел продаж.",
  'Onboarding notes, kept for reference: the team started with the viewer role for everyone, then promoted two people to admin after the pilot. They asked whether "owner" can be transferred without support (it can, from the settings page), whether deleted users keep their history (they do, for 90 days), and whether the API can return only changed rows since a timestamp. The last one is on the roadmap, no date promised; told them to watch the changelog and to contact us before building their own sync.',
];

/** Keys of `prefs`, in record order, with the share of non-null objects that have each (before the 2–4 keys rule). */
const PREF_KEYS: readonly (readonly [string, number])[] = [
  ["theme", 0.8],
  ["language", 0.7],
  ["newsletter", 0.6],
  ["pageSize", 0.3],
  ["timezone", 0.3],
  ["density", 0.2],
  ["tags", 0.15],
];

const THEMES = ["light", "dark", "system"] as const;
/** Interface languages, roughly the shares of the names' locales (users.ts). */
const LANGUAGES: readonly (readonly [string, number])[] = [
  ["en", 320], ["de", 100], ["fr", 100], ["es", 100], ["ru", 120], ["pl", 60], ["el", 60],
  ["tr", 50], ["uk", 30], ["vi", 30], ["ja", 20], ["zh", 10],
];
const PAGE_SIZES = [10, 25, 50, 100] as const;
const TIMEZONES = [
  "UTC", "Europe/Berlin", "Europe/Paris", "Europe/Madrid", "Europe/Warsaw", "Europe/Istanbul",
  "Europe/Moscow", "Europe/Kyiv", "Europe/Athens", "America/New_York", "America/Los_Angeles",
  "Asia/Tokyo", "Asia/Shanghai", "Asia/Ho_Chi_Minh",
] as const;
const DENSITIES = ["compact", "comfortable"] as const;
const TAGS = ["beta", "early-adopter", "enterprise", "edu", "partner", "nonprofit", "équipe"] as const;

/** Slots of the 16-bit lookup tables (the top 16 bits of a u32 index them). */
const SLOTS = 65536;

/** A 65,536-slot table of indexes into `weights`, each filling slots in proportion to its weight. */
function slotTable(weights: readonly number[]): Uint8Array {
  let total = 0;
  for (let i = 0; i < weights.length; i++) total += weights[i];
  const table = new Uint8Array(SLOTS);
  let cumulative = 0;
  let slot = 0;
  for (let i = 0; i < weights.length; i++) {
    cumulative += weights[i];
    const end = i === weights.length - 1 ? SLOTS : Math.round((cumulative / total) * SLOTS);
    for (; slot < end; slot++) table[slot] = i;
  }
  return table;
}

/** The `YYYY-MM-DD` strings of days `first` … `first + count - 1` (days since 1970-01-01). */
function dayStrings(first: number, count: number): string[] {
  const out = new Array<string>(count);
  for (let d = 0; d < count; d++) out[d] = new Date((first + d) * DAY_MS).toISOString().slice(0, 10);
  return out;
}

/** First birthday day that has age `age` on 2025-01-01 (born on the day after its date `age + 1` years before). */
function firstBirthdayDay(age: number): number {
  return Date.UTC(2024 - age, 0, 2) / DAY_MS;
}

/** Lookup tables shared by every call: built once, on first use. */
interface WideTables {
  ageBySlot: Uint8Array;
  hourBySlot: Uint8Array;
  roleBySlot: Uint8Array;
  themeBySlot: Uint8Array;
  languageBySlot: Uint8Array;
  /** `prefs` key masks (bit k = PREF_KEYS[k]) with 2–4 bits, by weight. */
  prefMaskBySlot: Uint8Array;
  prefMasks: number[];
  /** Birthday strings from the oldest (age 90) to the youngest (age 16) day. */
  birthdays: string[];
  /** Index in `birthdays` of the first day with age a on 2025-01-01, for a = 15 … 90 (15: one past the youngest). */
  birthdayStart: Int32Array;
}

let tables: WideTables | undefined;

function wideTables(): WideTables {
  if (tables !== undefined) return tables;
  const ages: number[] = [];
  for (let a = 0; a < MIN_AGE; a++) ages.push(0);
  for (let a = MIN_AGE; a <= MAX_AGE; a++) ages.push(ageWeight(a));
  // Every subset of the keys, weighted by each key's share in or out; only 2–4 keys allowed.
  const maskWeights: number[] = [];
  const prefMasks: number[] = [];
  for (let mask = 0; mask < 1 << PREF_KEYS.length; mask++) {
    let bits = 0;
    let weight = 1;
    for (let k = 0; k < PREF_KEYS.length; k++) {
      const p = PREF_KEYS[k][1];
      if ((mask >>> k) & 1) {
        bits++;
        weight *= p;
      } else weight *= 1 - p;
    }
    if (bits >= 2 && bits <= 4) {
      prefMasks.push(mask);
      maskWeights.push(weight);
    }
  }
  const firstBirthday = firstBirthdayDay(MAX_AGE);
  const lastBirthday = firstBirthdayDay(MIN_AGE - 1) - 1;
  const birthdayStart = new Int32Array(MAX_AGE + 1);
  for (let a = MIN_AGE - 1; a <= MAX_AGE; a++) birthdayStart[a] = firstBirthdayDay(a) - firstBirthday;
  tables = {
    ageBySlot: slotTable(ages),
    hourBySlot: slotTable(HOUR_WEIGHTS),
    roleBySlot: slotTable(ROLE_WEIGHTS.map((r) => r[1])),
    themeBySlot: slotTable([40, 35, 25]),
    languageBySlot: slotTable(LANGUAGES.map((l) => l[1])),
    prefMaskBySlot: slotTable(maskWeights),
    prefMasks,
    birthdays: dayStrings(firstBirthday, lastBirthday - firstBirthday + 1),
    birthdayStart,
  };
  return tables;
}

/**
 * A maker of wide records for a dataset of `count` rows and `seed`: call it with rows
 * i = 0, 1, …, count − 1 in order (it draws from one seeded stream), passing each row's seed
 * fields; it returns the record with those four fields first and the seven wide fields after
 * them ({@link WideUserRecord}, {@link WIDE_COLUMNS}).
 *
 * - `created_at`: row i's place on an exponential sign-up curve over 2015-01-01 … 2025-12-31
 *   (so it depends on `count`: any size spans the whole range), moved by a triangular jitter of
 *   up to ±60 days and clamped to the range; the UTC hour follows a daytime curve, minutes to
 *   milliseconds are uniform. Roughly increasing with id, but not in id order.
 * - `birthday` / `age`: an age from a realistic curve over 16–90 (most 25–44), raised for early
 *   sign-ups so that nobody signed up younger than 13, then a uniform birthday among the days
 *   that give that age on 2025-01-01; both null for about 6%.
 * - `role`, `verified`, `notes`, `prefs`: as {@link WideUserRecord} says.
 *
 * Cost: about half a microsecond a row, after about 20 ms of tables (built once per process).
 * @param count rows of the dataset (an integer ≥ 1): row i's place on the sign-up curve is (i + 0.5) / count.
 * @param seed only its low 32 bits matter (`seed | 0`).
 */
export function wideRecords(count: number, seed: number): WideRowMaker {
  const t = wideTables();
  const { ageBySlot, hourBySlot, roleBySlot, themeBySlot, languageBySlot, prefMaskBySlot, prefMasks, birthdays, birthdayStart } = t;
  // mulberry32 with a seed mix of its own (the names' stream in users.ts uses another).
  let state = (Math.imul(seed | 0, 0x85ebca6b) ^ 0x3c6ef372) >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return (x ^ (x >>> 14)) >>> 0;
  };
  const growth = Math.expm1(SIGNUP_GROWTH);
  const sentences = NOTE_SENTENCES.length;

  return (i, id, name, email, status) => {
    // created_at: the inverse of the cumulative sign-up curve at the row's place, plus jitter.
    const place = Math.log1p(((i + 0.5) / count) * growth) / SIGNUP_GROWTH;
    const j = next();
    // Sum of two uniform 16-bit halves: triangular on (-1, 1).
    const jitter = ((j & 0xffff) + (j >>> 16)) / 65536 - 1;
    let day = Math.floor(place * SIGNUP_DAYS + jitter * SIGNUP_JITTER_DAYS);
    if (day < 0) day = 0;
    else if (day >= SIGNUP_DAYS) day = SIGNUP_DAYS - 1;
    const hour = hourBySlot[next() >>> 16];
    const createdMs = (SIGNUP_FIRST_DAY + day) * DAY_MS + hour * HOUR_MS + (next() % HOUR_MS);
    const created_at = new Date(createdMs).toISOString();

    // birthday and age.
    const b = next();
    let birthday: string | null = null;
    let age: number | null = null;
    if (b >= P_BIRTHDAY_NULL) {
      // The low 16 bits: the high ones are biased by the null test above.
      let a = ageBySlot[b & 0xffff];
      const minAge = MIN_SIGNUP_AGE + Math.floor((AGE_REFERENCE_MS - createdMs) / MS_PER_YEAR);
      if (a < minAge) a = Math.min(MAX_AGE, minAge + (a - MIN_AGE));
      // Days with age a: from its first day to the day before age a - 1's first (365 or 366).
      const first = birthdayStart[a];
      birthday = birthdays[first + (next() % (birthdayStart[a - 1] - first))];
      age = a;
    }

    const r = next();
    const role = ROLE_WEIGHTS[roleBySlot[r >>> 16]][0];
    const verified = next() < P_VERIFIED;

    // notes: null, "", a paragraph (1 in 32 of the others), or 1–3 distinct sentences.
    const n = next();
    let notes: string | null = null;
    if (n >= P_NOTES_NULL) {
      if (n < P_NOTES_EMPTY) notes = "";
      else {
        const pick = next();
        if ((pick & 31) === 0) notes = NOTE_PARAGRAPHS[(pick >>> 5) % NOTE_PARAGRAPHS.length];
        else {
          // 1 sentence 50%, 2 sentences 35%, 3 sentences 15% (bits 5..11: 0..127).
          const k = (pick >>> 5) & 127;
          const s1 = (pick >>> 12) % sentences;
          notes = NOTE_SENTENCES[s1];
          if (k >= 64) {
            const s2 = (s1 + 1 + (next() % (sentences - 1))) % sentences;
            notes = `${notes} ${NOTE_SENTENCES[s2]}`;
            if (k >= 109) {
              let s3 = next() % sentences;
              while (s3 === s1 || s3 === s2) s3 = (s3 + 1) % sentences;
              notes = `${notes} ${NOTE_SENTENCES[s3]}`;
            }
          }
        }
      }
    }

    // prefs: null, or 2–4 keys in PREF_KEYS order.
    const p = next();
    let prefs: Record<string, PrefValue> | null = null;
    if (p >= P_PREFS_NULL) {
      // The low 16 bits: the high ones are biased by the null test above.
      const mask = prefMasks[prefMaskBySlot[p & 0xffff]];
      const v = next();
      prefs = {};
      // Value bits: theme and language from 16 bits each of one u32, the others from a second.
      if (mask & 1) prefs.theme = THEMES[themeBySlot[v & 0xffff]];
      if (mask & 2) prefs.language = LANGUAGES[languageBySlot[v >>> 16]][0];
      if (mask & 124) {
        const w = next();
        if (mask & 4) prefs.newsletter = (w & 7) < 3; // 3 in 8 subscribe
        if (mask & 8) prefs.pageSize = PAGE_SIZES[(w >>> 3) & 3];
        if (mask & 16) prefs.timezone = TIMEZONES[((w >>> 5) & 0xff) % TIMEZONES.length];
        if (mask & 32) prefs.density = DENSITIES[(w >>> 13) & 1];
        if (mask & 64) {
          // 1–3 distinct tags, in TAGS order: the bits of a 7-bit set, at least one.
          let set = (w >>> 14) & 127;
          while (set === 0 || popcount7(set) > 3) set = (set * 37 + 11) & 127;
          const tags: string[] = [];
          for (let k = 0; k < TAGS.length; k++) if ((set >>> k) & 1) tags.push(TAGS[k]);
          prefs.tags = tags;
        }
      }
    }

    return { id, name, email, status, created_at, birthday, role, age, verified, notes, prefs };
  };
}

/** Set bits of a 7-bit number. */
function popcount7(x: number): number {
  let bits = 0;
  for (let k = 0; k < 7; k++) bits += (x >>> k) & 1;
  return bits;
}
