/**
 * Reading a date the service wrote, whatever its form, as a calendar day (YYYY-MM-DD). The API document does
 * not say how dates are written, so besides ISO dates and date-times this reads the common unambiguous forms.
 * A form where the day and the month could be swapped (03/04/2026) is read only when the service profile says
 * which comes first; a date that cannot be read is never taken for "no date": the caller counts it apart.
 * Imports nothing of ours.
 */

/** Which comes first in a date such as 03/04/2026, where both readings are dates: the service profile's `dates.ambiguous`. */
export type AmbiguousOrder = 'day-first' | 'month-first' | 'unread';

/** How a date was written, for the words that name it (`check`, notes). */
export type DateForm =
  | 'YYYY-MM-DD'
  | 'ISO date-time'
  | 'YYYY/MM/DD'
  | 'YYYYMMDD'
  | 'DD.MM.YYYY'
  | 'DD/MM/YYYY'
  | 'MM/DD/YYYY'
  | 'day-first or month-first'
  | 'epoch seconds'
  | 'epoch milliseconds'
  | 'day and month name'
  | 'other';

/** A date as read: its day, or null with the form that could not be read (`ambiguous`: only the profile can tell). */
export type DateReading = { day: string; form: DateForm } | { day: null; form: DateForm; ambiguous: boolean };

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const pad = (n: number) => String(n).padStart(2, '0');

/** The day when year, month and day make a real calendar day; null otherwise (month 13, 31 April). */
function calendarDay(year: number, month: number, day: number): string | null {
  if (month < 1 || month > 12 || day < 1 || day > 31 || year < 1000 || year > 9999) return null;
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? `${year}-${pad(month)}-${pad(day)}` : null;
}

const ISO = /^\d{4}-\d{2}-\d{2}/;
const YMD = /^(\d{4})([/.-])(\d{1,2})\2(\d{1,2})(?:$|[ T])/;
const COMPACT = /^(\d{4})(\d{2})(\d{2})$/;
const TWO_PARTS_FIRST = /^(\d{1,2})([./-])(\d{1,2})\2(\d{4})(?:$|[ T,])/;
const EPOCH = /^-?\d{9,13}(?:\.\d+)?$/;
const NAMED_DAY_FIRST = /^(\d{1,2})(?:st|nd|rd|th)?[ -]([a-z]{3,9})\.?[ ,-]*(\d{4})/i;
const NAMED_MONTH_FIRST = /^([a-z]{3,9})\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})/i;

function monthOf(name: string): number {
  const at = MONTHS.indexOf(name.slice(0, 3).toLowerCase());
  return at === -1 || !'january february march april may june july august september october november december'.split(' ')[at]!.startsWith(name.toLowerCase())
    ? 0
    : at + 1;
}

/**
 * Reads `text` (as the record holds it: numbers arrive as their text) into a calendar day. ISO forms keep the day as
 * written in their own offset (2026-01-15T23:30:00-05:00 is the 15th), as the service's own calendar would.
 */
function readDate(text: string, order: AmbiguousOrder = 'unread'): DateReading {
  if (ISO.test(text)) {
    const day = calendarDay(Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8, 10)));
    const form: DateForm = text.length === 10 ? 'YYYY-MM-DD' : 'ISO date-time';
    // A day no calendar has (2026-00-15, 2026-02-30) is not read: it is counted apart, never overdue nor "due soon".
    return found(day, form);
  }
  const trimmed = text.trim();
  let m = YMD.exec(trimmed);
  if (m) return found(calendarDay(+m[1]!, +m[3]!, +m[4]!), 'YYYY/MM/DD');
  m = COMPACT.exec(trimmed);
  if (m) return found(calendarDay(+m[1]!, +m[2]!, +m[3]!), 'YYYYMMDD');
  m = TWO_PARTS_FIRST.exec(trimmed);
  if (m) {
    const [a, b, year] = [+m[1]!, +m[3]!, +m[4]!];
    const dayFirst = calendarDay(year, b, a);
    const monthFirst = calendarDay(year, a, b);
    const dotted = m[2] === '.';
    if (dayFirst && monthFirst && dayFirst !== monthFirst) {
      if (order === 'day-first') return { day: dayFirst, form: dotted ? 'DD.MM.YYYY' : 'DD/MM/YYYY' };
      if (order === 'month-first') return { day: monthFirst, form: 'MM/DD/YYYY' };
      return { day: null, form: 'day-first or month-first', ambiguous: true };
    }
    if (dayFirst) return { day: dayFirst, form: dotted ? 'DD.MM.YYYY' : 'DD/MM/YYYY' };
    if (monthFirst) return { day: monthFirst, form: 'MM/DD/YYYY' };
    return { day: null, form: 'other', ambiguous: false };
  }
  if (EPOCH.test(trimmed)) {
    const n = Number(trimmed);
    // Ten digits or fewer are seconds (until the year 2286), more are milliseconds.
    const ms = trimmed.replace(/^-/, '').split('.')[0]!.length <= 10 ? n * 1000 : n;
    const date = new Date(ms);
    return Number.isNaN(date.getTime())
      ? { day: null, form: 'other', ambiguous: false }
      : { day: date.toISOString().slice(0, 10), form: ms === n ? 'epoch milliseconds' : 'epoch seconds' };
  }
  m = NAMED_DAY_FIRST.exec(trimmed);
  if (m) return found(calendarDay(+m[3]!, monthOf(m[2]!), +m[1]!), 'day and month name');
  m = NAMED_MONTH_FIRST.exec(trimmed);
  if (m) return found(calendarDay(+m[3]!, monthOf(m[1]!), +m[2]!), 'day and month name');
  return { day: null, form: 'other', ambiguous: false };
}

function found(day: string | null, form: DateForm): DateReading {
  return day ? { day, form } : { day: null, form, ambiguous: false };
}

/**
 * Whether the first ten characters of `text` (already known to start YYYY-MM-DD) name a real calendar day: the
 * per-record shortcut of a list's tables, which must read exactly what readDay reads.
 */
export function isCalendarIso(text: string): boolean {
  const month = (text.charCodeAt(5) - 48) * 10 + (text.charCodeAt(6) - 48);
  const day = (text.charCodeAt(8) - 48) * 10 + (text.charCodeAt(9) - 48);
  // Years before 1000 are no day here, as calendarDay says (a leading 0).
  if (month < 1 || month > 12 || day < 1 || text.charCodeAt(0) === 48) return false;
  // Days 1 to 28 exist in every month; the rest are asked of the calendar.
  return day <= 28 || calendarDay(Number(text.slice(0, 4)), month, day) !== null;
}

/** The day of a record's date field: null when absent (no date), else its reading. */
export function readDay(value: string | null | undefined, order: AmbiguousOrder = 'unread'): DateReading | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  return readDate(value, order);
}

const DAY_MS = 86_400_000;

/**
 * Whole days from `due` to `asOf`, both calendar days as readDay gives them (YYYY-MM-DD, UTC); null for a `due` Date cannot
 * parse at all (month 13). A day that parses but no calendar has (2026-02-30) is not checked here: readDay never gives one.
 */
export function daysBetween(due: string, asOf: string): number | null {
  const start = Date.parse(`${due}T00:00:00Z`);
  return Number.isNaN(start) ? null : Math.round((Date.parse(`${asOf}T00:00:00Z`) - start) / DAY_MS);
}
