import { SETTINGS, type SettingName } from './settings.js';

/** The names that are not settings: a `DOCREQ_*` variable or a flag not in the table, named with the closest one. */

/** Variables with the DOCREQ_ prefix that are not settings but are known (tests and examples). */
const NOT_SETTINGS = new Set(['DOCREQ_TEST_ERA', 'DOCREQ_MCP_URL']);
/** Settings whose misspelling would leave sending on or widen access: a name close to one of these stops the start. */
const GUARDING: ReadonlySet<SettingName> = new Set<SettingName>([
  'readOnly',
  'confirmSend',
  'auth',
  'authReaders',
  'authSenders',
  'allowedOrigins',
  'allowedHosts',
]);

/** Edit distance with transpositions (optimal string alignment), for "did you mean". */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The known name closest to `name` (compared without case, `-` or `_`), when it is close enough to be a slip. */
function closestName<T extends string>(name: string, known: readonly T[]): T | undefined {
  const plain = (s: string) =>
    s
      .toLowerCase()
      .replace(/^(docreq_|--)/, '')
      .replace(/[-_]/g, '');
  const target = plain(name);
  let best: T | undefined;
  let bestScore = Infinity;
  for (const candidate of known) {
    const score = distance(target, plain(candidate));
    if (score < bestScore) [best, bestScore] = [candidate, score];
  }
  return best !== undefined && bestScore <= Math.max(2, Math.floor(target.length / 4)) ? best : undefined;
}

/**
 * Every `DOCREQ_*` variable that is not a setting, named with the closest setting. `stop` holds those
 * whose closest setting guards sending or access (`DOCREQ_READONLY` for `DOCREQ_READ_ONLY`): starting
 * would silently leave the guard off, so the start is refused.
 */
export function unknownVariables(env: NodeJS.ProcessEnv): { warn: string[]; stop: string[] } {
  const entries = Object.entries(SETTINGS) as [SettingName, (typeof SETTINGS)[SettingName]][];
  const known = new Set<string>(entries.map(([, s]) => s.env));
  const names = entries.map(([, s]) => s.env);
  const warn: string[] = [];
  const stop: string[] = [];
  for (const variable of Object.keys(env).sort()) {
    if (!variable.toUpperCase().startsWith('DOCREQ_') || known.has(variable) || NOT_SETTINGS.has(variable)) continue;
    const near = closestName(variable, names);
    const setting = near && entries.find(([, s]) => s.env === near)?.[0];
    const text = `${variable} is not a setting${near ? ` (did you mean ${near}?)` : ''}`;
    if (setting && GUARDING.has(setting))
      stop.push(`${text}: it would be ignored and ${near} left at its default, so docreq-mcp does not start; rename it, or unset it.`);
    else warn.push(`${text}; it is ignored.`);
  }
  return { warn, stop };
}

/** An unknown flag, named with the closest known one. */
export function unknownFlag(flag: string, known: readonly string[]): string {
  const near = closestName(
    flag,
    known.map((k) => `--${k}`),
  );
  return `unknown option ${flag}${near ? ` (did you mean ${near}?)` : ''}.`;
}
