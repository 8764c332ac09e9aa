// The four modules of src/domain/ called directly, without a server: how a date the service wrote is read (every form,
// the day-first/month-first rule, epochs, named months, calendar validity), the open/closed rule for statuses, the
// service profile (its schema, every method of ServiceProfile, DEFAULT_PROFILE) and the checklist item schema.
// Every expectation is an exact value, with both sides of each boundary, so a changed operator or literal is seen.
import { describe, expect, it } from 'vitest';
import { CORRECTNESS_MODES, ITEM_TYPES, MAX_ITEM_NAME, MAX_ITEMS, MAX_TITLE, checklistItem, itemIn } from '../src/domain/checklist.js';
import { daysBetween, isCalendarIso, readDay, type AmbiguousOrder, type DateReading } from '../src/domain/dates.js';
import { DEFAULT_CLOSED_STATUSES, DEFAULT_OPEN_STATUSES, StatusRules, statusKey } from '../src/domain/request-status.js';
import { DEFAULT_PROFILE, ServiceProfile, serviceProfileSchema, type RequestBody } from '../src/domain/service-profile.js';

const read = (day: string, form: DateReading['form']): DateReading => ({ day, form });
const unread = (form: DateReading['form'], ambiguous = false): DateReading => ({ day: null, form, ambiguous });
const OTHER = unread('other');

describe('readDay: no date, and ISO dates', () => {
  it.each([null, undefined, '', ' ', '  \t '])('reads %j as no date (null), not as a date it cannot read', (value) => {
    expect(readDay(value)).toBeNull();
  });

  it.each<[string, DateReading]>([
    ['2026-01-15', read('2026-01-15', 'YYYY-MM-DD')],
    ['2026-12-31', read('2026-12-31', 'YYYY-MM-DD')],
    ['2026-01-01', read('2026-01-01', 'YYYY-MM-DD')],
    ['1000-01-01', read('1000-01-01', 'YYYY-MM-DD')],
    ['9999-12-31', read('9999-12-31', 'YYYY-MM-DD')],
    ['2026-01-15T10:00:00Z', read('2026-01-15', 'ISO date-time')],
    ['2026-01-15T23:30:00-05:00', read('2026-01-15', 'ISO date-time')],
    ['2026-01-15T00:30:00+09:00', read('2026-01-15', 'ISO date-time')],
    ['2026-01-15 10:00', read('2026-01-15', 'ISO date-time')],
    ['2026-01-15T', read('2026-01-15', 'ISO date-time')],
  ])('reads ISO %s as written, in its own offset', (text, reading) => {
    expect(readDay(text)).toEqual(reading);
  });

  it.each<[string, DateReading]>([
    ['2026-13-01', unread('YYYY-MM-DD')],
    ['2026-00-15', unread('YYYY-MM-DD')],
    ['2026-12-00', unread('YYYY-MM-DD')],
    ['2026-01-32', unread('YYYY-MM-DD')],
    ['2026-04-31', unread('YYYY-MM-DD')],
    ['2026-04-30', read('2026-04-30', 'YYYY-MM-DD')],
    ['2026-02-28', read('2026-02-28', 'YYYY-MM-DD')],
    ['2026-02-29', unread('YYYY-MM-DD')],
    ['2024-02-29', read('2024-02-29', 'YYYY-MM-DD')],
    ['2024-02-30', unread('YYYY-MM-DD')],
    ['2100-02-29', unread('YYYY-MM-DD')],
    ['2000-02-29', read('2000-02-29', 'YYYY-MM-DD')],
    ['0999-12-31', unread('YYYY-MM-DD')],
    ['0050-01-01', unread('YYYY-MM-DD')],
    ['0000-01-01', unread('YYYY-MM-DD')],
    ['2026-02-30T17:00:00Z', unread('ISO date-time')],
  ])('refuses ISO %s when no calendar has that day (month 13, 31 April, 29 Feb, year < 1000)', (text, reading) => {
    expect(readDay(text)).toEqual(reading);
  });

  // Only a text that is exactly YYYY-MM-DD is named so; anything after it (even a space) makes it a date-time, and
  // the ISO shape is tested before trimming, so a leading space is read by the YYYY/MM/DD form instead.
  it.each<[string, DateReading]>([
    ['2026-01-15 ', read('2026-01-15', 'ISO date-time')],
    [' 2026-01-15', read('2026-01-15', 'YYYY/MM/DD')],
    ['  2026-01-15T10:00:00Z ', read('2026-01-15', 'YYYY/MM/DD')],
    ['2026-01-150', read('2026-01-15', 'ISO date-time')],
    ['2026-01-15junk', read('2026-01-15', 'ISO date-time')],
    ['x2026-01-15', OTHER],
    ['2026-3-01xxxx', OTHER],
    ['2026-03-1xyzw', OTHER],
  ])('reads %j with spaces or junk around it exactly as the forms say', (text, reading) => {
    expect(readDay(text)).toEqual(reading);
  });
});

describe('readDay: YYYY/MM/DD and YYYYMMDD', () => {
  it.each<[string, DateReading]>([
    ['2026/01/05', read('2026-01-05', 'YYYY/MM/DD')],
    ['2026/1/5', read('2026-01-05', 'YYYY/MM/DD')],
    ['2026.01.05', read('2026-01-05', 'YYYY/MM/DD')],
    ['2026-1-5', read('2026-01-05', 'YYYY/MM/DD')],
    ['2026/12/31', read('2026-12-31', 'YYYY/MM/DD')],
    ['2026/01/05 10:00', read('2026-01-05', 'YYYY/MM/DD')],
    ['2026/01/05T10:00', read('2026-01-05', 'YYYY/MM/DD')],
    [' 2026/01/05 ', read('2026-01-05', 'YYYY/MM/DD')],
    ['2026/13/01', unread('YYYY/MM/DD')],
    ['2026/02/29', unread('YYYY/MM/DD')],
    ['2024/2/29', read('2024-02-29', 'YYYY/MM/DD')],
    ['0999/01/01', unread('YYYY/MM/DD')],
  ])('reads %j as YYYY/MM/DD, any of / . - as the one separator', (text, reading) => {
    expect(readDay(text)).toEqual(reading);
  });

  it.each(['2026/01-05', '2026/01.05', '2026/001/05', '2026/01/005', '2026/01/05x', '2026/01/05,', 'x2026/01/05', '12026/01/05', '2026//05'])(
    'refuses %j: mixed separators, three digits, or junk around a YYYY/MM/DD',
    (text) => {
      expect(readDay(text)).toEqual(OTHER);
    },
  );

  it.each<[string, DateReading]>([
    ['20260115', read('2026-01-15', 'YYYYMMDD')],
    [' 20260115 ', read('2026-01-15', 'YYYYMMDD')],
    ['20241231', read('2024-12-31', 'YYYYMMDD')],
    ['20261301', unread('YYYYMMDD')],
    ['20260230', unread('YYYYMMDD')],
    ['12345678', unread('YYYYMMDD')],
    ['09990101', unread('YYYYMMDD')],
    ['2026011', OTHER],
    ['x20260115', OTHER],
    ['20260115x', OTHER],
    ['2026011 5', OTHER],
  ])('reads %j as YYYYMMDD only when it is exactly eight digits', (text, reading) => {
    expect(readDay(text)).toEqual(reading);
  });
});

describe('readDay: day and month as numbers, the day-first/month-first rule', () => {
  const ORDERS: AmbiguousOrder[] = ['unread', 'day-first', 'month-first'];

  it.each<[string, DateReading, DateReading, DateReading]>([
    ['03/04/2026', unread('day-first or month-first', true), read('2026-04-03', 'DD/MM/YYYY'), read('2026-03-04', 'MM/DD/YYYY')],
    ['03.04.2026', unread('day-first or month-first', true), read('2026-04-03', 'DD.MM.YYYY'), read('2026-03-04', 'MM/DD/YYYY')],
    ['3-4-2026', unread('day-first or month-first', true), read('2026-04-03', 'DD/MM/YYYY'), read('2026-03-04', 'MM/DD/YYYY')],
    ['12/01/2026', unread('day-first or month-first', true), read('2026-01-12', 'DD/MM/YYYY'), read('2026-12-01', 'MM/DD/YYYY')],
    ['01/12/2026', unread('day-first or month-first', true), read('2026-12-01', 'DD/MM/YYYY'), read('2026-01-12', 'MM/DD/YYYY')],
    // Both readings the same day: no question to ask, named day-first whatever the profile says.
    ['04/04/2026', read('2026-04-04', 'DD/MM/YYYY'), read('2026-04-04', 'DD/MM/YYYY'), read('2026-04-04', 'DD/MM/YYYY')],
    ['12.12.2026', read('2026-12-12', 'DD.MM.YYYY'), read('2026-12-12', 'DD.MM.YYYY'), read('2026-12-12', 'DD.MM.YYYY')],
    // Only one reading is a date: that one, whatever the profile says.
    ['13/04/2026', read('2026-04-13', 'DD/MM/YYYY'), read('2026-04-13', 'DD/MM/YYYY'), read('2026-04-13', 'DD/MM/YYYY')],
    ['13.04.2026', read('2026-04-13', 'DD.MM.YYYY'), read('2026-04-13', 'DD.MM.YYYY'), read('2026-04-13', 'DD.MM.YYYY')],
    ['25.03.2026', read('2026-03-25', 'DD.MM.YYYY'), read('2026-03-25', 'DD.MM.YYYY'), read('2026-03-25', 'DD.MM.YYYY')],
    ['04/13/2026', read('2026-04-13', 'MM/DD/YYYY'), read('2026-04-13', 'MM/DD/YYYY'), read('2026-04-13', 'MM/DD/YYYY')],
    ['04.13.2026', read('2026-04-13', 'MM/DD/YYYY'), read('2026-04-13', 'MM/DD/YYYY'), read('2026-04-13', 'MM/DD/YYYY')],
    ['31/12/2026', read('2026-12-31', 'DD/MM/YYYY'), read('2026-12-31', 'DD/MM/YYYY'), read('2026-12-31', 'DD/MM/YYYY')],
    ['29/02/2024', read('2024-02-29', 'DD/MM/YYYY'), read('2024-02-29', 'DD/MM/YYYY'), read('2024-02-29', 'DD/MM/YYYY')],
    ['02/29/2024', read('2024-02-29', 'MM/DD/YYYY'), read('2024-02-29', 'MM/DD/YYYY'), read('2024-02-29', 'MM/DD/YYYY')],
    // 30 and 31 February, 31 April: neither reading is a date.
    ['29/02/2026', OTHER, OTHER, OTHER],
    ['31/02/2026', OTHER, OTHER, OTHER],
    ['31/04/2026', OTHER, OTHER, OTHER],
    ['13/13/2026', OTHER, OTHER, OTHER],
    ['00/00/2026', OTHER, OTHER, OTHER],
    ['01/01/0999', OTHER, OTHER, OTHER],
  ])('reads %j as unread / day-first / month-first says', (text, ...readings) => {
    ORDERS.forEach((order, i) => expect(readDay(text, order), order).toEqual(readings[i]));
  });

  it('reads 03/04/2026 day-first only when the profile says so; unread by default', () => {
    expect(readDay('03/04/2026')).toEqual({ day: null, form: 'day-first or month-first', ambiguous: true });
    expect(readDay('03/04/2026', 'day-first')).toEqual({ day: '2026-04-03', form: 'DD/MM/YYYY' });
  });

  it.each<[string, DateReading]>([
    ['13/04/2026 10:00', read('2026-04-13', 'DD/MM/YYYY')],
    ['13/04/2026T10:00', read('2026-04-13', 'DD/MM/YYYY')],
    ['13/04/2026, 10:00', read('2026-04-13', 'DD/MM/YYYY')],
    [' 13/04/2026 ', read('2026-04-13', 'DD/MM/YYYY')],
    ['3/4/2026 ', unread('day-first or month-first', true)],
    ['13/04/2026x', OTHER],
    ['13/04/20261', OTHER],
    ['13/04/26', OTHER],
    ['13/04.2026', OTHER],
    ['113/04/2026', OTHER],
    ['001/04/2026', OTHER],
    ['0013/04/2026', OTHER],
    ['13/004/2026', OTHER],
    ['x13/04/2026', OTHER],
    ['13_04_2026', OTHER],
  ])('reads %j: a time, T or comma may follow; other junk, two-digit years or mixed separators may not', (text, reading) => {
    expect(readDay(text)).toEqual(reading);
  });
});

describe('readDay: epoch seconds and milliseconds', () => {
  it.each<[string, DateReading]>([
    ['1768435200', read('2026-01-15', 'epoch seconds')],
    ['1768435200000', read('2026-01-15', 'epoch milliseconds')],
    ['1768521599', read('2026-01-15', 'epoch seconds')],
    ['1768521600', read('2026-01-16', 'epoch seconds')],
    ['1768435199999', read('2026-01-14', 'epoch milliseconds')],
    [' 1768435200 ', read('2026-01-15', 'epoch seconds')],
    // Nine and ten digits are seconds; eleven to thirteen are milliseconds; eight are YYYYMMDD; fourteen are nothing.
    ['999999999', read('2001-09-09', 'epoch seconds')],
    ['9999999999', read('2286-11-20', 'epoch seconds')],
    ['10000000000', read('1970-04-26', 'epoch milliseconds')],
    ['9999999999999', read('2286-11-20', 'epoch milliseconds')],
    ['99999999999999', OTHER],
    // A decimal part or a minus sign does not count as a digit of the whole seconds.
    ['1768435200.5', read('2026-01-15', 'epoch seconds')],
    ['1768435200.123', read('2026-01-15', 'epoch seconds')],
    ['1768435200000.5', read('2026-01-15', 'epoch milliseconds')],
    ['-1000000000', read('1938-04-24', 'epoch seconds')],
    ['-100000000', read('1966-10-31', 'epoch seconds')],
    ['-10000000000', read('1969-09-07', 'epoch milliseconds')],
    // Zero seconds are zero milliseconds too: named milliseconds (see the report), the day is right.
    ['000000000', read('1970-01-01', 'epoch milliseconds')],
  ])('reads epoch %j', (text, reading) => {
    expect(readDay(text)).toEqual(reading);
  });

  const NOT_EPOCHS = ['1768435200.', '.1768435200', '1768435200e3', '1768435200x', 'x1768435200', '+1768435200', '--1768435200', '-12345678', '12345678.5'];
  it.each([...NOT_EPOCHS, '17684 35200'])('refuses %j: not a plain epoch number', (text) => {
    expect(readDay(text)).toEqual(OTHER);
  });

  it('reads a named date ending in ten digits by its name, not as an epoch', () => {
    expect(readDay('1 Jan 2026 1768435200')).toEqual(read('2026-01-01', 'day and month name'));
  });
});

describe('readDay: day and month name', () => {
  const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

  it.each(MONTH_NAMES.map((name, i) => [name, i + 1] as const))('reads the month %s, in full and in three letters, as month %i', (name, month) => {
    const day = `2026-${String(month).padStart(2, '0')}-05`;
    for (const text of [`5 ${name} 2026`, `5 ${name.slice(0, 3)} 2026`, `${name} 5, 2026`, `${name.slice(0, 3).toUpperCase()} 05 2026`]) {
      expect(readDay(text), text).toEqual(read(day, 'day and month name'));
    }
  });

  it.each<[string, DateReading]>([
    ['15 January 2026', read('2026-01-15', 'day and month name')],
    ['15 JANUARY 2026', read('2026-01-15', 'day and month name')],
    ['15 january 2026', read('2026-01-15', 'day and month name')],
    ['1st Feb 2026', read('2026-02-01', 'day and month name')],
    ['2nd Feb 2026', read('2026-02-02', 'day and month name')],
    ['3rd Feb 2026', read('2026-02-03', 'day and month name')],
    ['4th Feb 2026', read('2026-02-04', 'day and month name')],
    ['15-Jan-2026', read('2026-01-15', 'day and month name')],
    ['15th-Jan-2026', read('2026-01-15', 'day and month name')],
    ['15 Jan. 2026', read('2026-01-15', 'day and month name')],
    ['15 Jan, 2026', read('2026-01-15', 'day and month name')],
    ['15 Jan2026', read('2026-01-15', 'day and month name')],
    ['15 Jan , - 2026', read('2026-01-15', 'day and month name')],
    ['15 Sept 2026', read('2026-09-15', 'day and month name')],
    ['15 Janu 2026', read('2026-01-15', 'day and month name')],
    ['15 September 2026', read('2026-09-15', 'day and month name')],
    [' 15 January 2026 ', read('2026-01-15', 'day and month name')],
    ['15 January 2026 10:00', read('2026-01-15', 'day and month name')],
    ['15 January 20261', read('2026-01-15', 'day and month name')],
    ['31 Dec 2026', read('2026-12-31', 'day and month name')],
    ['29 Feb 2024', read('2024-02-29', 'day and month name')],
    ['29 Feb 2026', unread('day and month name')],
    ['31 April 2026', unread('day and month name')],
    ['0 Jan 2026', unread('day and month name')],
    ['15 Jan 0999', unread('day and month name')],
    ['15 Jane 2026', unread('day and month name')],
    ['15 Foo 2026', unread('day and month name')],
    ['15 Ja 2026', OTHER],
    ['15 Septembers 2026', OTHER],
    ['15/Jan/2026', OTHER],
    ['15 Jan 26', OTHER],
    ['15th  Jan 2026', OTHER],
    ['x15 January 2026', OTHER],
    ['115 January 2026', OTHER],
    ['015 January 2026', OTHER],
  ])('reads %j day first', (text, reading) => {
    expect(readDay(text)).toEqual(reading);
  });

  it.each<[string, DateReading]>([
    ['January 15, 2026', read('2026-01-15', 'day and month name')],
    ['Jan. 15 2026', read('2026-01-15', 'day and month name')],
    ['Jan 15th, 2026', read('2026-01-15', 'day and month name')],
    ['Jan 1st 2026', read('2026-01-01', 'day and month name')],
    ['jan 2nd 2026', read('2026-01-02', 'day and month name')],
    ['MAR 3rd, 2026', read('2026-03-03', 'day and month name')],
    ['Mar 9, 2026', read('2026-03-09', 'day and month name')],
    ['Sept 30, 2026 at noon', read('2026-09-30', 'day and month name')],
    ['Feb 29, 2026', unread('day and month name')],
    ['Febr 29, 2024', read('2024-02-29', 'day and month name')],
    ['Fbr 1, 2026', unread('day and month name')],
    ['January 15,2026', OTHER],
    ['January  15, 2026', OTHER],
    ['January 15 , 2026', OTHER],
    ['January 150, 2026', OTHER],
    ['January 015, 2026', OTHER],
    ['Ja 15, 2026', OTHER],
    ['1January 15, 2026', OTHER],
    ['soon', OTHER],
    ['next week', OTHER],
  ])('reads %j month first', (text, reading) => {
    expect(readDay(text)).toEqual(reading);
  });
});

describe('isCalendarIso: the shortcut reads exactly what readDay reads', () => {
  it.each<[string, boolean]>([
    ['2026-01-15', true],
    ['2026-01-01', true],
    ['2026-12-31', true],
    ['2026-00-15', false],
    ['2026-13-01', false],
    ['2026-01-00', false],
    ['2026-01-28', true],
    ['2026-02-28', true],
    ['2026-02-29', false],
    ['2024-02-29', true],
    ['2026-02-30', false],
    ['2026-04-30', true],
    ['2026-04-31', false],
    ['2026-03-31', true],
    ['2026-01-32', false],
    ['0999-01-15', false],
    ['0999-12-31', false],
    ['1000-01-01', true],
    ['9999-12-31', true],
    ['2026-01-15T23:30:00-05:00', true],
    ['2026-02-29T00:00:00Z', false],
  ])('%s is a calendar day: %s', (text, expected) => {
    expect(isCalendarIso(text)).toBe(expected);
  });

  it('agrees with readDay on every month 00–13 and day 00–32 of seven years', () => {
    let checked = 0;
    for (const year of ['0999', '1000', '1900', '2000', '2024', '2026', '2100']) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          const text = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
          expect(isCalendarIso(text), text).toBe(readDay(text)!.day === text);
          checked++;
        }
      }
    }
    expect(checked).toBe(7 * 14 * 33);
  });
});

describe('daysBetween', () => {
  it.each<[string, string, number | null]>([
    ['2026-01-15', '2026-01-20', 5],
    ['2026-01-20', '2026-01-15', -5],
    ['2026-01-15', '2026-01-15', 0],
    ['2026-01-15', '2026-01-16', 1],
    ['2026-02-28', '2026-03-01', 1],
    ['2024-02-28', '2024-03-01', 2],
    ['2025-12-31', '2026-01-01', 1],
    ['2025-03-29', '2025-03-31', 2],
    ['2026-01-01', '2027-01-01', 365],
    ['2024-01-01', '2025-01-01', 366],
    ['2026-13-01', '2026-01-01', null],
    ['2026-00-10', '2026-01-01', null],
    ['soon', '2026-01-01', null],
    ['2026-1-5', '2026-01-06', null],
  ])('from %s to %s is %j days', (due, asOf, days) => {
    expect(daysBetween(due, asOf)).toBe(days);
  });

  it('pins what the engine makes of a due day no calendar has but Date.parse rolls over, and of a bad asOf', () => {
    // 2026-02-30 is not null: V8 reads it as 2 March (see the report). A bad asOf gives NaN, not null.
    expect(daysBetween('2026-02-30', '2026-03-01')).toBe(-1);
    expect(daysBetween('2026-01-15', 'garbage')).toBeNaN();
  });
});

describe('request statuses', () => {
  it('the default lists are the statuses a service like ours uses', () => {
    expect([...DEFAULT_CLOSED_STATUSES]).toEqual(['completed', 'complete', 'closed', 'done', 'cancelled', 'canceled', 'archived']);
    expect([...DEFAULT_OPEN_STATUSES]).toEqual([
      'sent',
      'in_progress',
      'open',
      'pending',
      'new',
      'draft',
      'viewed',
      'awaiting',
      'partially_completed',
      'overdue',
      'active',
    ]);
  });

  it.each<[string, string]>([
    ['open', 'open'],
    ['CLOSED', 'closed'],
    ['In Progress', 'in_progress'],
    ['in-progress', 'in_progress'],
    ['in_progress', 'in_progress'],
    [' In   Progress ', 'in_progress'],
    ['in - progress', 'in_progress'],
    ['in__progress', 'in_progress'],
    ['in\tprogress', 'in_progress'],
    ['partially-completed now', 'partially_completed_now'],
    ['a.b', 'a.b'],
    ['', ''],
  ])('statusKey(%j) is %j', (status, key) => {
    expect(statusKey(status)).toBe(key);
  });

  const rules = new StatusRules();
  it.each<[string | null, string]>([
    [null, 'unknown'],
    ['withdrawn', 'unknown'],
    ['', 'unknown'],
    ...DEFAULT_CLOSED_STATUSES.map((s): [string, string] => [s, 'closed']),
    ...DEFAULT_OPEN_STATUSES.map((s): [string, string] => [s, 'open']),
    ['Completed', 'closed'],
    [' CANCELLED ', 'closed'],
    ['In Progress', 'open'],
    ['partially-completed', 'open'],
  ])('by default, status %j is %s', (status, kind) => {
    expect(rules.kind(status)).toBe(kind);
  });

  it('a profile names its own lists; a status in both is closed; describe gives the keys, once each', () => {
    const own = new StatusRules([' Open Now ', 'open-now', 'Both'], ['Shut', 'both']);
    expect(own.kind('OPEN_NOW')).toBe('open');
    expect(own.kind('shut')).toBe('closed');
    expect(own.kind('both')).toBe('closed');
    expect(own.kind('sent')).toBe('unknown');
    expect(own.kind('completed')).toBe('unknown');
    expect(own.describe()).toEqual({ open: ['open_now', 'both'], closed: ['shut', 'both'] });
    expect(new StatusRules([], []).describe()).toEqual({ open: [], closed: [] });
    expect(rules.describe()).toEqual({ open: [...DEFAULT_OPEN_STATUSES], closed: [...DEFAULT_CLOSED_STATUSES] });
  });

  it.each<[string | null, number | null, number | null, boolean]>([
    ['sent', 3, 1, true],
    ['sent', 3, 3, false],
    ['sent', 3, 4, false],
    ['sent', 3, 2, true],
    ['sent', 1, 1, false],
    ['sent', 1, 0, true],
    ['sent', 0, 0, true],
    ['sent', 0, 1, true],
    ['sent', null, 3, true],
    ['sent', 3, null, true],
    ['sent', null, null, true],
    ['completed', 3, 0, false],
    ['Closed', null, null, false],
    ['withdrawn', 2, 1, true],
    ['withdrawn', 2, 2, false],
    [null, 2, 2, false],
    [null, 2, 1, true],
    [null, null, null, true],
  ])('status %j with %j items, %j complete: open is %s', (status, totalItems, completedItems, open) => {
    expect(rules.isOpen({ status, totalItems, completedItems })).toBe(open);
  });
});

const DEFAULT_SPEC = {
  body: {
    client: 'clientId',
    title: 'title',
    dueDate: 'dueDate',
    items: 'items',
    correctnessMode: 'correctnessMode',
    item: { name: 'name', required: 'required', type: 'type' },
  },
  values: { itemType: {}, correctnessMode: {}, dueDate: 'date' },
  statuses: {},
  dates: { ambiguous: 'unread' },
  created: { record: 'auto' },
};

/** The issues a profile is refused with: path and message. */
const issues = (input: unknown) => {
  const r = serviceProfileSchema.safeParse(input);
  return r.success ? [] : r.error.issues.map((i) => ({ path: i.path, message: i.message }));
};
const profile = (input: unknown, source?: string) => new ServiceProfile(serviceProfileSchema.parse(input), source);

describe('serviceProfileSchema', () => {
  it('an empty profile is every default, exactly', () => {
    expect(serviceProfileSchema.parse({})).toStrictEqual(DEFAULT_SPEC);
    expect(serviceProfileSchema.parse({ body: {}, values: {}, statuses: {}, dates: {}, created: {} })).toStrictEqual(DEFAULT_SPEC);
  });

  it('reads every part of a full profile, trimming names and spellings', () => {
    const spec = serviceProfileSchema.parse({
      body: {
        client: ' customer_id ',
        title: 'subject',
        dueDate: 'due.date',
        items: 'check:list',
        correctnessMode: '$mode',
        item: { name: '@label', required: 'must-have', type: 'kind' },
      },
      values: { itemType: { file: ' document ', text: 'string' }, correctnessMode: { hard: 'strict' }, dueDate: 'date-time' },
      statuses: { open: [' Sent '], closed: ['Done'] },
      dates: { ambiguous: 'day-first' },
      created: { record: ' result.request ' },
    });
    expect(spec).toStrictEqual({
      body: {
        client: 'customer_id',
        title: 'subject',
        dueDate: 'due.date',
        items: 'check:list',
        correctnessMode: '$mode',
        item: { name: '@label', required: 'must-have', type: 'kind' },
      },
      values: { itemType: { file: 'document', text: 'string' }, correctnessMode: { hard: 'strict' }, dueDate: 'date-time' },
      statuses: { open: ['Sent'], closed: ['Done'] },
      dates: { ambiguous: 'day-first' },
      created: { record: 'result.request' },
    });
  });

  it.each(['a', 'due_date', 'Fälligkeit', '日付', 'x1', 'a$b@c.d:e-f_g', '$', 'x'.repeat(64), ` ${'x'.repeat(64)} `, '__proto', 'proto__'])(
    'accepts %j as a body field name',
    (name) => {
      expect(issues({ body: { dueDate: name } })).toEqual([]);
    },
  );

  it.each(['', '   '])('refuses %j as a body field name: empty, and so not a plain name either', (name) => {
    const message = ['must not be empty', 'must be a plain field name (letters, digits, _ - . : $ @)'];
    expect(issues({ body: { title: name } })).toEqual(message.map((m) => ({ path: ['body', 'title'], message: m })));
  });

  it.each<[unknown, string]>([
    ['x'.repeat(65), 'must be at most 64 characters'],
    ['due date', 'must be a plain field name (letters, digits, _ - . : $ @)'],
    ['a/b', 'must be a plain field name (letters, digits, _ - . : $ @)'],
    ['a[0]', 'must be a plain field name (letters, digits, _ - . : $ @)'],
    ['due"date', 'must be a plain field name (letters, digits, _ - . : $ @)'],
    ['__proto__', 'must be a plain field name (letters, digits, _ - . : $ @)'],
    [' __proto__ ', 'must be a plain field name (letters, digits, _ - . : $ @)'],
  ])('refuses %j as a body field name: %s', (name, message) => {
    expect(issues({ body: { dueDate: name } })).toEqual([{ path: ['body', 'dueDate'], message }]);
    expect(issues({ body: { item: { type: name } } })).toEqual([{ path: ['body', 'item', 'type'], message }]);
  });

  it('refuses two body fields with one name, naming both (items apart from the top)', () => {
    expect(issues({ body: { title: 'clientId' } })).toEqual([{ path: ['body', 'title'], message: 'names the same field as body.client ("clientId")' }]);
    expect(issues({ body: { dueDate: 'title' } })).toEqual([{ path: ['body', 'dueDate'], message: 'names the same field as body.title ("title")' }]);
    expect(issues({ body: { client: 'x', correctnessMode: 'x', items: 'x' } })).toEqual([
      { path: ['body', 'items'], message: 'names the same field as body.client ("x")' },
      { path: ['body', 'correctnessMode'], message: 'names the same field as body.items ("x")' },
    ]);
    expect(issues({ body: { item: { required: 'name' } } })).toEqual([
      // The path's first step is 'body.item' as one key, not 'body', 'item' (joined with dots it reads the same).
      { path: ['body.item', 'required'], message: 'names the same field as body.item.name ("name")' },
    ]);
    expect(issues({ body: { client: 'name', item: { name: 'clientId' } } })).toEqual([]);
  });

  it('refuses a status listed open and closed, compared as statusKey compares', () => {
    expect(issues({ statuses: { open: ['In Progress', 'sent'], closed: ['in-progress', 'done', 'SENT'] } })).toEqual([
      { path: ['statuses', 'closed'], message: '"in-progress" is listed as open too' },
      { path: ['statuses', 'closed'], message: '"SENT" is listed as open too' },
    ]);
    expect(issues({ statuses: { closed: ['sent'] } })).toEqual([]);
    expect(issues({ statuses: { open: ['done'] } })).toEqual([]);
    expect(serviceProfileSchema.parse({ statuses: { closed: ['sent'] } }).statuses).toStrictEqual({ closed: ['sent'] });
  });

  it('statuses: 1 to 64 characters each, at most 200', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);
    expect(issues({ statuses: { open: many(200), closed: [] } })).toEqual([]);
    expect(issues({ statuses: { open: many(201) } })).toEqual([{ path: ['statuses', 'open'], message: 'at most 200 statuses' }]);
    expect(issues({ statuses: { closed: many(201) } })).toEqual([{ path: ['statuses', 'closed'], message: 'at most 200 statuses' }]);
    expect(issues({ statuses: { open: ['x'.repeat(64)] } })).toEqual([]);
    expect(issues({ statuses: { open: ['ok', ' '] } })).toEqual([{ path: ['statuses', 'open', 1], message: 'must not be empty' }]);
    expect(issues({ statuses: { closed: ['x'.repeat(65)] } })).toEqual([
      { path: ['statuses', 'closed', 0], message: 'Too big: expected string to have <=64 characters' },
    ]);
  });

  it('values: item types and modes spelled 1 to 64 characters, known keys only; the due date a date or a date-time', () => {
    expect(issues({ values: { itemType: { boolean: 'x'.repeat(64) }, correctnessMode: { off: 'none' } } })).toEqual([]);
    expect(issues({ values: { itemType: { file: ' ' } } })).toEqual([{ path: ['values', 'itemType', 'file'], message: 'must not be empty' }]);
    expect(issues({ values: { correctnessMode: { soft: 'x'.repeat(65) } } })).toEqual([
      { path: ['values', 'correctnessMode', 'soft'], message: 'must be at most 64 characters' },
    ]);
    expect(issues({ values: { itemType: { pdf: 'x' } } })).toEqual([{ path: ['values', 'itemType'], message: 'Unrecognized key: "pdf"' }]);
    expect(issues({ values: { correctnessMode: { strict: 'x' } } })).toEqual([{ path: ['values', 'correctnessMode'], message: 'Unrecognized key: "strict"' }]);
    const values = (v: unknown) => serviceProfileSchema.parse({ values: v }).values;
    for (const t of ITEM_TYPES) expect(values({ itemType: { [t]: t.toUpperCase() } }).itemType).toEqual({ [t]: t.toUpperCase() });
    for (const m of CORRECTNESS_MODES) expect(values({ correctnessMode: { [m]: 'x' } }).correctnessMode).toEqual({ [m]: 'x' });
    expect(serviceProfileSchema.parse({ values: { dueDate: 'date-time' } }).values.dueDate).toBe('date-time');
    expect(issues({ values: { dueDate: 'datetime' } })).toHaveLength(1);
  });

  it('dates.ambiguous is day-first, month-first or unread', () => {
    for (const order of ['day-first', 'month-first', 'unread']) {
      expect(serviceProfileSchema.parse({ dates: { ambiguous: order } }).dates.ambiguous).toBe(order);
    }
    expect(issues({ dates: { ambiguous: 'dmy' } })).toHaveLength(1);
  });

  it.each(['auto', 'body', 'data', 'result.request', 'a.b.c', 'x-y:z$@_1', 'Données', 'x'.repeat(100)])('accepts created.record %j', (record) => {
    expect(serviceProfileSchema.parse({ created: { record } }).created.record).toBe(record);
  });

  it.each(['', ' '])('refuses created.record %j: empty, and so not a path either', (record) => {
    expect(issues({ created: { record } })).toEqual([
      { path: ['created', 'record'], message: 'must not be empty' },
      { path: ['created', 'record'], message: 'must be auto, body, or a field path such as data or result.request' },
    ]);
  });

  it.each<[string, string]>([
    ['x'.repeat(101), 'Too big: expected string to have <=100 characters'],
    ['.data', 'must be auto, body, or a field path such as data or result.request'],
    ['data.', 'must be auto, body, or a field path such as data or result.request'],
    ['a..b', 'must be auto, body, or a field path such as data or result.request'],
    ['a b', 'must be auto, body, or a field path such as data or result.request'],
    ['a[0]', 'must be auto, body, or a field path such as data or result.request'],
    ['a/b', 'must be auto, body, or a field path such as data or result.request'],
  ])('refuses created.record %j: %s', (record, message) => {
    expect(issues({ created: { record } })).toEqual([{ path: ['created', 'record'], message }]);
  });

  it('refuses keys it does not know, at every level', () => {
    expect(issues({ bodies: {} })).toEqual([{ path: [], message: 'Unrecognized key: "bodies"' }]);
    expect(issues({ body: { due: 'x' } })).toEqual([{ path: ['body'], message: 'Unrecognized key: "due"' }]);
    expect(issues({ body: { item: { label: 'x' } } })).toEqual([{ path: ['body', 'item'], message: 'Unrecognized key: "label"' }]);
    expect(issues({ statuses: { unknown: [] } })).toEqual([{ path: ['statuses'], message: 'Unrecognized key: "unknown"' }]);
    expect(issues({ dates: { order: 'x' } })).toEqual([{ path: ['dates'], message: 'Unrecognized key: "order"' }]);
    expect(issues({ created: { path: 'x' } })).toEqual([{ path: ['created'], message: 'Unrecognized key: "path"' }]);
  });
});

const RENAMED = {
  body: { client: 'customer', dueDate: 'due_date', items: 'checklist', correctnessMode: 'mode', item: { name: 'label', type: 'kind' } },
  values: { itemType: { file: 'document', text: 'string' }, correctnessMode: { hard: 'strict', off: 'none' }, dueDate: 'date-time' },
  statuses: { open: ['Sent', 'in-progress'], closed: ['Done'] },
  dates: { ambiguous: 'day-first' },
  created: { record: 'body' },
};

describe('ServiceProfile: construction and DEFAULT_PROFILE', () => {
  it('without a spec it is the defaults, with no source', () => {
    const p = new ServiceProfile();
    expect(p.spec).toStrictEqual(DEFAULT_SPEC);
    expect(p.source).toBeUndefined();
    expect(p.ambiguousDates).toBe('unread');
    expect(p.statuses.describe()).toEqual({ open: [...DEFAULT_OPEN_STATUSES], closed: [...DEFAULT_CLOSED_STATUSES] });
  });

  it('DEFAULT_PROFILE is the defaults', () => {
    expect(DEFAULT_PROFILE.spec).toStrictEqual(DEFAULT_SPEC);
    expect(DEFAULT_PROFILE.source).toBeUndefined();
    expect(DEFAULT_PROFILE.ambiguousDates).toBe('unread');
    expect(DEFAULT_PROFILE.describe()).toEqual(new ServiceProfile().describe());
    expect(DEFAULT_PROFILE.statuses.kind('completed')).toBe('closed');
  });

  it('keeps its source, its date order and its status lists (a list not given is the default one)', () => {
    const p = profile(RENAMED, '/etc/profile.yaml');
    expect(p.source).toBe('/etc/profile.yaml');
    expect(p.ambiguousDates).toBe('day-first');
    expect(p.statuses.describe()).toEqual({ open: ['sent', 'in_progress'], closed: ['done'] });
    expect(p.statuses.kind('completed')).toBe('unknown');
    expect(profile({ statuses: { open: ['live'] } }).statuses.describe()).toEqual({ open: ['live'], closed: [...DEFAULT_CLOSED_STATUSES] });
    expect(profile({ statuses: { closed: ['gone'] } }).statuses.describe()).toEqual({ open: [...DEFAULT_OPEN_STATUSES], closed: ['gone'] });
    expect(profile({ dates: { ambiguous: 'month-first' } }).ambiguousDates).toBe('month-first');
  });
});

describe('ServiceProfile.body, modeSpelled, fieldOf', () => {
  const request: RequestBody = {
    clientId: 'c1',
    title: 'Tax 2025',
    dueDate: '2026-04-15',
    items: [
      { name: 'W-2', required: true, type: 'file' },
      { name: 'Notes', required: false, type: 'text' },
      { name: 'Paid?', required: true, type: 'boolean' },
    ],
    correctnessMode: 'hard',
  };

  it('by default, the body is the request under the API document names', () => {
    expect(DEFAULT_PROFILE.body(request)).toStrictEqual({
      clientId: 'c1',
      title: 'Tax 2025',
      dueDate: '2026-04-15',
      items: [
        { name: 'W-2', required: true, type: 'file' },
        { name: 'Notes', required: false, type: 'text' },
        { name: 'Paid?', required: true, type: 'boolean' },
      ],
      correctnessMode: 'hard',
    });
    expect(Object.keys(DEFAULT_PROFILE.body(request))).toEqual(['clientId', 'title', 'dueDate', 'items', 'correctnessMode']);
  });

  it('leaves out a due date and a mode not given (absent or empty), never sending them empty', () => {
    const bare = { clientId: 'c1', title: 'T', items: [] };
    expect(DEFAULT_PROFILE.body(bare)).toStrictEqual({ clientId: 'c1', title: 'T', items: [] });
    expect(DEFAULT_PROFILE.body({ ...bare, dueDate: '', correctnessMode: '' })).toStrictEqual({ clientId: 'c1', title: 'T', items: [] });
  });

  it('a renamed profile renames every field, spells types and modes its way, and sends the due date as a date-time', () => {
    expect(profile(RENAMED).body(request)).toStrictEqual({
      customer: 'c1',
      title: 'Tax 2025',
      due_date: '2026-04-15T00:00:00Z',
      checklist: [
        { label: 'W-2', required: true, kind: 'document' },
        { label: 'Notes', required: false, kind: 'string' },
        { label: 'Paid?', required: true, kind: 'boolean' },
      ],
      mode: 'strict',
    });
    expect(profile(RENAMED).body({ ...request, correctnessMode: 'soft' }).mode).toBe('soft');
    expect(profile(RENAMED).body({ ...request, correctnessMode: 'off' }).mode).toBe('none');
  });

  it('modeSpelled: the profile spelling, else the mode itself', () => {
    const p = profile(RENAMED);
    expect(CORRECTNESS_MODES.map((m) => p.modeSpelled(m))).toEqual(['none', 'advisory', 'soft', 'strict']);
    expect(CORRECTNESS_MODES.map((m) => DEFAULT_PROFILE.modeSpelled(m))).toEqual(['off', 'advisory', 'soft', 'hard']);
  });

  it('fieldOf: the service name of each argument and the setting that names it', () => {
    const args = ['client', 'title', 'dueDate', 'items', 'correctnessMode'] as const;
    expect(args.map((a) => DEFAULT_PROFILE.fieldOf(a))).toEqual([
      { name: 'clientId', setting: 'body.client' },
      { name: 'title', setting: 'body.title' },
      { name: 'dueDate', setting: 'body.dueDate' },
      { name: 'items', setting: 'body.items' },
      { name: 'correctnessMode', setting: 'body.correctnessMode' },
    ]);
    expect(profile(RENAMED).fieldOf('dueDate')).toEqual({ name: 'due_date', setting: 'body.dueDate' });
  });
});

describe('ServiceProfile.nameField', () => {
  it.each<[string, string]>([
    ['title', 'title'],
    ['dueDate', 'dueDate'],
    ['items', 'items'],
    ['correctnessMode', 'correctnessMode'],
    ['clientId', 'client (sent as "clientId", named by body.client in the service profile)'],
    ['items[0]', 'items[0]'],
    ['items[12]', 'items[12]'],
    ['items[0].name', 'items[0].name'],
    ['items[3].type', 'items[3].type'],
    ['items[0].foo', 'items[0].foo'],
    ['items[0].a.b', 'items[0].a.b'],
    // Not a field of ours, or not a path of the form field, field[n] or field[n].inner: as given.
    ['name', 'name'],
    ['foo', 'foo'],
    ['foo[0].name', 'foo[0].name'],
    ['', ''],
    ['items.name', 'items.name'],
    ['.title', '.title'],
    ['items[x]', 'items[x]'],
    ['items[]', 'items[]'],
    ['items[0]x', 'items[0]x'],
    ['items[0].', 'items[0].'],
    ['title[0', 'title[0'],
  ])('by default names %j as %j', (path, words) => {
    expect(DEFAULT_PROFILE.nameField(path)).toBe(words);
  });

  it.each<[string, string]>([
    ['title', 'title'],
    ['due_date', 'dueDate (sent as "due_date", named by body.dueDate in the service profile)'],
    ['customer', 'client (sent as "customer", named by body.client in the service profile)'],
    ['mode', 'correctnessMode (sent as "mode", named by body.correctnessMode in the service profile)'],
    ['checklist', 'items (sent as "checklist", named by body.items in the service profile)'],
    ['checklist[12]', 'items[12] (sent as "checklist[12]", named by body.items in the service profile)'],
    ['checklist[0].required', 'items[0].required (sent as "checklist[0].required", named by body.items in the service profile)'],
    ['checklist[0].label', 'items[0].name (sent as "checklist[0].label", named by body.item.name in the service profile)'],
    ['checklist[1].kind', 'items[1].type (sent as "checklist[1].kind", named by body.item.type in the service profile)'],
    ['checklist[0].name', 'items[0].name (sent as "checklist[0].name", named by body.items in the service profile)'],
    ['dueDate', 'dueDate'],
    ['items[0].label', 'items[0].label'],
    ['clientId', 'clientId'],
  ])('with renamed fields names %j as %j', (path, words) => {
    expect(profile(RENAMED).nameField(path)).toBe(words);
  });

  it('names an item field renamed under items kept as named', () => {
    const p = profile({ body: { item: { name: 'label' } } });
    expect(p.nameField('items[0].label')).toBe('items[0].name (sent as "items[0].label", named by body.item.name in the service profile)');
    expect(p.nameField('items[0].required')).toBe('items[0].required');
    expect(p.nameField('items[0].name')).toBe('items[0].name');
  });
});

describe('ServiceProfile.createdRecord', () => {
  const auto = DEFAULT_PROFILE;

  it.each([null, undefined, 'x', 5, true, [], [{ id: 'r1' }]])('holds no record in a non-object answer %j', (answer) => {
    expect(auto.createdRecord(answer)).toBeNull();
    expect(profile({ created: { record: 'body' } }).createdRecord(answer)).toBeNull();
    expect(profile({ created: { record: 'data' } }).createdRecord(answer)).toBeNull();
  });

  it.each(['data', 'request', 'result', 'record'])('auto: finds the record under %s', (wrapper) => {
    expect(auto.createdRecord({ ok: true, [wrapper]: { id: 'r1' } })).toStrictEqual({ id: 'r1' });
  });

  it.each<[unknown, unknown]>([
    [
      { id: 'r1', title: 'T' },
      { id: 'r1', title: 'T' },
    ],
    [
      { data: {}, id: 'r1' },
      { data: {}, id: 'r1' },
    ],
    [
      { data: [1, 2], id: 'r1' },
      { data: [1, 2], id: 'r1' },
    ],
    [{ data: 'x' }, { data: 'x' }],
    [{ data: {} }, { data: {} }],
    [{ record: { id: 'c' }, result: { id: 'b' }, request: { id: 'a' }, data: { id: 'd' } }, { id: 'd' }],
    [{ record: { id: 'c' }, result: { id: 'b' }, request: { id: 'a' } }, { id: 'a' }],
    [{ record: { id: 'c' }, result: { id: 'b' } }, { id: 'b' }],
    [{ data: {}, request: { id: 'a' } }, { id: 'a' }],
    [{ data: { nested: { id: 'x' } } }, { nested: { id: 'x' } }],
    [{}, null],
  ])('auto: %j holds %j', (answer, record) => {
    expect(auto.createdRecord(answer)).toStrictEqual(record);
  });

  it('body: the answer itself, wrappers and all; a path: the object at its end', () => {
    const body = profile({ created: { record: 'body' } });
    expect(body.createdRecord({ data: { id: 'r1' } })).toStrictEqual({ data: { id: 'r1' } });
    expect(body.createdRecord({})).toBeNull();
    const path = profile({ created: { record: 'result.request' } });
    expect(path.createdRecord({ result: { request: { id: 'r1' } } })).toStrictEqual({ id: 'r1' });
    expect(path.createdRecord({ result: { request: {} } })).toBeNull();
    expect(path.createdRecord({ result: { request: [1] } })).toBeNull();
    expect(path.createdRecord({ result: 'x' })).toBeNull();
    expect(path.createdRecord({ result: null })).toBeNull();
    expect(path.createdRecord({ result: {} })).toBeNull();
    expect(path.createdRecord({ data: { id: 'r1' } })).toBeNull();
    expect(path.createdRecord({ request: { id: 'r1' } })).toBeNull();
    const one = profile({ created: { record: 'data' } });
    expect(one.createdRecord({ data: { id: 'r1' }, request: { id: 'r2' } })).toStrictEqual({ id: 'r1' });
    expect(one.createdRecord({ id: 'r1' })).toBeNull();
  });
});

describe('ServiceProfile.kept', () => {
  it('reads our documented names', () => {
    const record = { clientId: 'c1', clientName: 'Ann', title: 'T', dueDate: '2026-04-15', totalItems: 3, correctnessMode: 'hard', other: 1 };
    const kept = { clientId: 'c1', clientName: 'Ann', title: 'T', dueDate: '2026-04-15', items: 3, correctnessMode: 'hard' };
    expect(DEFAULT_PROFILE.kept(record)).toStrictEqual(kept);
  });

  it('reads the snake_case names, ours first when both are there', () => {
    const snake = { client_id: 'c2', client_name: 'Bo', due_date: '2026-05-01', total_items: 2, correctness_mode: 'soft' };
    expect(DEFAULT_PROFILE.kept(snake)).toStrictEqual({ clientId: 'c2', clientName: 'Bo', dueDate: '2026-05-01', items: 2, correctnessMode: 'soft' });
    const both = { ...snake, clientId: 'c1', clientName: 'Ann', dueDate: '2026-04-15', totalItems: 3, correctnessMode: 'hard' };
    expect(DEFAULT_PROFILE.kept(both)).toStrictEqual({ clientId: 'c1', clientName: 'Ann', dueDate: '2026-04-15', items: 3, correctnessMode: 'hard' });
  });

  it('reads the service own body names after ours and before snake_case', () => {
    const p = profile({ body: { client: 'customer', title: 'subject', dueDate: 'deadline', items: 'checklist', correctnessMode: 'mode' } });
    const ours = { customer: 'c', subject: 'S', deadline: 'd', checklist: [1, 2, 3], mode: 'm' };
    const record = { ...ours, client_id: 'x', due_date: 'x', items: [1], correctness_mode: 'x' };
    expect(p.kept(record)).toStrictEqual({
      clientId: 'c',
      title: 'S',
      dueDate: 'd',
      items: 3,
      correctnessMode: 'm',
    });
    expect(p.kept({ items: [1] })).toStrictEqual({ items: 1 });
  });

  it('counts items from a finite number first, else the length of a list, else null', () => {
    expect(DEFAULT_PROFILE.kept({ itemCount: 4, items: [1] })).toStrictEqual({ items: 4 });
    expect(DEFAULT_PROFILE.kept({ totalItems: 0, items: [1] })).toStrictEqual({ items: 0 });
    expect(DEFAULT_PROFILE.kept({ totalItems: '3', items: [1, 2] })).toStrictEqual({ items: 2 });
    expect(DEFAULT_PROFILE.kept({ totalItems: Infinity, items: [1] })).toStrictEqual({ items: 1 });
    expect(DEFAULT_PROFILE.kept({ totalItems: NaN })).toStrictEqual({});
    expect(DEFAULT_PROFILE.kept({ items: 'three' })).toStrictEqual({ items: null });
    expect(DEFAULT_PROFILE.kept({ items: [] })).toStrictEqual({ items: 0 });
  });

  it('keeps a field present with a null or undefined value, and nothing for fields absent or inherited', () => {
    expect(DEFAULT_PROFILE.kept({ title: undefined, dueDate: null, clientId: '' })).toStrictEqual({ title: undefined, dueDate: null, clientId: '' });
    expect(DEFAULT_PROFILE.kept({})).toStrictEqual({});
    expect(DEFAULT_PROFILE.kept(Object.create({ title: 'inherited' }) as Record<string, unknown>)).toStrictEqual({});
  });
});

describe('ServiceProfile.describe', () => {
  it('the defaults, line by line', () => {
    expect(new ServiceProfile().describe()).toEqual([
      'body field names: the defaults (clientId, title, dueDate, items: name, required, type; correctnessMode)',
      'values: as the API document spells them; due date sent as a date (YYYY-MM-DD)',
      'statuses open: sent, in_progress, open, pending, new, draft, viewed, awaiting, partially_completed, overdue, active (defaults)',
      'statuses closed: completed, complete, closed, done, cancelled, canceled, archived (defaults)',
      'dates such as 03/04/2026: not read (set dates.ambiguous to day-first or month-first)',
      'created record: found in the answer (bare, or under data, request, result or record)',
    ]);
  });

  it('a profile that differs everywhere, line by line', () => {
    expect(profile(RENAMED).describe()).toEqual([
      'body field names: client → "customer", dueDate → "due_date", items → "checklist", correctnessMode → "mode", item.name → "label", item.type → "kind"',
      'values: type file → "document", type text → "string", mode off → "none", mode hard → "strict"; due date sent as a date-time (YYYY-MM-DDT00:00:00Z)',
      'statuses open: sent, in_progress',
      'statuses closed: done',
      'dates such as 03/04/2026: day-first',
      'created record: the answer itself',
    ]);
  });

  it('names one renamed field, a spelling alone, a mode alone, month-first and a record path', () => {
    expect(
      profile({
        body: { title: 'subject' },
        values: { itemType: { date: 'day' } },
        statuses: { closed: ['gone'] },
        dates: { ambiguous: 'month-first' },
        created: { record: 'result.request' },
      }).describe(),
    ).toEqual([
      'body field names: title → "subject"',
      'values: type date → "day"; due date sent as a date (YYYY-MM-DD)',
      `statuses open: ${DEFAULT_OPEN_STATUSES.join(', ')} (defaults)`,
      'statuses closed: gone',
      'dates such as 03/04/2026: month-first',
      'created record: under result.request',
    ]);
    expect(
      profile({ body: { item: { required: 'mandatory' } }, values: { correctnessMode: { soft: 'lenient' } } })
        .describe()
        .slice(0, 2),
    ).toEqual(['body field names: item.required → "mandatory"', 'values: mode soft → "lenient"; due date sent as a date (YYYY-MM-DD)']);
  });
});

describe('checklist items', () => {
  it('the item types, modes and limits', () => {
    expect([...ITEM_TYPES]).toEqual(['file', 'text', 'date', 'number', 'boolean']);
    expect([...CORRECTNESS_MODES]).toEqual(['off', 'advisory', 'soft', 'hard']);
    expect({ MAX_ITEMS, MAX_TITLE, MAX_ITEM_NAME }).toEqual({ MAX_ITEMS: 100, MAX_TITLE: 200, MAX_ITEM_NAME: 200 });
  });

  it('describes each field for the tool schema', () => {
    expect(itemIn.shape.name.description).toBe('What to provide, e.g. "W-2 forms".');
    expect(itemIn.shape.required.description).toBe('Default true.');
    expect(itemIn.shape.type.description).toBe('Default file.');
  });

  it.each<[unknown, unknown]>([
    [{ name: 'W-2' }, { name: 'W-2' }],
    [{ name: ' W-2 ' }, { name: ' W-2 ' }],
    [
      { name: 'x', required: false, type: 'text' },
      { name: 'x', required: false, type: 'text' },
    ],
    [{ name: 'n'.repeat(200) }, { name: 'n'.repeat(200) }],
    [{ name: `  ${'n'.repeat(200)}  ` }, { name: `  ${'n'.repeat(200)}  ` }],
    [{ name: '😀'.repeat(200) }, { name: '😀'.repeat(200) }],
    ...ITEM_TYPES.map((type): [unknown, unknown] => [
      { name: 'x', type },
      { name: 'x', type },
    ]),
  ])('itemIn accepts %j as it is', (item, parsed) => {
    expect(itemIn.parse(item)).toStrictEqual(parsed);
  });

  const itemIssues = (item: unknown) => {
    const r = itemIn.safeParse(item);
    return r.success ? [] : r.error.issues.map((i) => ({ path: i.path, message: i.message }));
  };

  it.each<[unknown, { path: PropertyKey[]; message: string }[]]>([
    [{ name: '' }, [{ path: ['name'], message: 'must not be empty' }]],
    [{ name: ' \t ' }, [{ path: ['name'], message: 'must not be empty' }]],
    [{ name: 'n'.repeat(201) }, [{ path: ['name'], message: 'must be at most 200 characters' }]],
    [{ name: ` ${'n'.repeat(201)} ` }, [{ path: ['name'], message: 'must be at most 200 characters' }]],
    [{ name: '😀'.repeat(201) }, [{ path: ['name'], message: 'must be at most 200 characters' }]],
    [{ name: 'x', extra: 1 }, [{ path: [], message: 'Unrecognized key: "extra"' }]],
  ])('itemIn refuses %j', (item, expected) => {
    expect(itemIssues(item)).toEqual(expected);
  });

  it('itemIn refuses an unknown type, a required that is not a boolean, a missing name', () => {
    expect(itemIssues({ name: 'x', type: 'pdf' }).map((i) => i.path)).toEqual([['type']]);
    expect(itemIssues({ name: 'x', required: 'yes' }).map((i) => i.path)).toEqual([['required']]);
    expect(itemIssues({}).map((i) => i.path)).toEqual([['name']]);
  });

  it.each<[Parameters<typeof checklistItem>[0], unknown]>([
    [{ name: ' W-2 ' }, { name: 'W-2', required: true, type: 'file' }],
    [
      { name: 'Notes', required: false },
      { name: 'Notes', required: false, type: 'file' },
    ],
    [
      { name: 'Paid', type: 'boolean' },
      { name: 'Paid', required: true, type: 'boolean' },
    ],
    [
      { name: 'When', required: true, type: 'date' },
      { name: 'When', required: true, type: 'date' },
    ],
  ])('checklistItem(%j) fills the defaults: %j', (item, filled) => {
    expect(checklistItem(item)).toStrictEqual(filled);
  });
});
