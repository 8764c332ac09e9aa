// Each measured figure that has a target, beside that target, marked met or missed: worked out from the
// generated figures, throughput and scale blocks of docs/performance.md (never typed by hand).
// scripts/readme.mjs writes targetsBlock(...) into the page's targets block; test/readme.test.ts checks it.

/** The rows of a markdown table in `text` (header and rule dropped), each as its trimmed cells. */
export function tableRows(text) {
  return text
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('|---'))
    .slice(1)
    .map((l) =>
      l
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
}

const number = (s) => Number(s.replace(/,/g, ''));

/**
 * Whether `now` meets one target clause such as `≤ 2.0×`, `< 8,000 chars`, `≤ 1.5 s`, `≤ 6 MB`, `≥ 2× calls/s`
 * or a bare count (`1`); null when the clause is not a measurable comparison (e.g. `≈ 1 (linear)`, `exact`).
 * `now.ratio` is the figure's ratio, `now.text` all of its figures.
 */
export function meets(clause, now) {
  const m = /^(≤|<|≥|>)?\s*([\d.,]+)\s*(×|chars|s|ms|MB)?(?: calls\/s)?$/.exec(clause.trim());
  if (!m) return null;
  const [, op = '=', limit, unit = ''] = m;
  let value;
  if (unit === '×') value = now.ratio ?? /([\d.]+)×/.exec(now.text)?.[1];
  else if (unit === 'chars') value = /([\d,]+) chars/.exec(now.text)?.[1];
  else if (unit === 'MB') value = /([\d.]+) MB on the wire/.exec(now.text)?.[1] ?? /([\d.]+) MB/.exec(now.text)?.[1];
  else if (unit === 's' || unit === 'ms') {
    const ms = /([\d.,]+) ms/.exec(now.text)?.[1];
    value = ms === undefined ? undefined : String(number(ms) / (unit === 's' ? 1000 : 1));
  } else value = /^([\d,]+)\b/.exec(now.text)?.[1];
  if (value === undefined) return null;
  const [v, l] = [number(value), number(limit)];
  return { '≤': v <= l, '<': v < l, '≥': v >= l, '>': v > l, '=': v === l }[op];
}

/** A target's verdict over all its clauses: 'met', 'missed', or null when any clause cannot be judged. */
export function verdict(target, now) {
  const results = target.split(/,\s(?=[≤<≥>])/).map((clause) => meets(clause, now));
  if (results.some((r) => r === null)) return null;
  return results.every(Boolean) ? 'met' : 'missed';
}

/** Every row with a target from the three generated tables: { measure, now, target }. */
export function targetRows({ figures = '', throughput = '', scale = '' }) {
  const rows = [];
  for (const [group, measure, value, reference, ratio, target] of tableRows(figures)) {
    // A target in the reference column ("0.65× main; target ≤ 1.1×, < 8,000 chars") when the target column is empty.
    const inReference = /^([\d.]+×)?[^;]*;\s*(?:target\s+)?(.+)$/.exec(reference ?? '');
    const goal = target || (inReference ? inReference[2] : '');
    if (!goal) continue;
    const r = (ratio || inReference?.[1] || '').replace(/×.*$/, '');
    rows.push({
      measure: measure.startsWith(group) ? measure : `${group}: ${measure}`,
      now: { text: [value, reference].join(' · '), ratio: r || undefined },
      shown: [value, ratio || inReference?.[1]].filter(Boolean).join(' · '),
      target: goal,
    });
  }
  for (const [measure, figure, target] of tableRows(throughput)) {
    // This build's rows carry "≥ 0.6× the reference" (a "before" build's rows are for comparison only).
    if (!target || / before \(/.test(measure)) continue;
    const ratio = /\*\*([\d.]+)×\*\*/.exec(figure)?.[1];
    rows.push({
      measure,
      now: { text: figure, ratio },
      shown: `${figure.split(';')[0]}${ratio ? ` · ${ratio}×` : ''}`,
      target: target.replace(/^target\s+/, '').replace(/ the reference( · missed)?$/, ''),
    });
  }
  for (const [measure, result] of tableRows(scale)) {
    const [figure, target] = result.split(/\s·\starget\s+/);
    if (!target) continue;
    rows.push({ measure: `team mode at scale: ${measure}`, now: { text: figure }, shown: figure.split(' (')[0], target });
  }
  return rows;
}

/** The targets table: each figure beside its target, misses marked. */
export function targetsBlock(tables) {
  const rows = targetRows(tables).map((r) => ({ ...r, verdict: verdict(r.target, r.now) }));
  const missed = rows.filter((r) => r.verdict === 'missed').length;
  const met = rows.filter((r) => r.verdict === 'met').length;
  const mark = { met: 'met', missed: '**missed**', null: 'not judged (see the row)' };
  return [
    `${met} targets met, **${missed} missed**, ${rows.length - met - missed} not judged by a number, in the last runs below.`,
    '',
    '| measure | now | target | |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.measure} | ${r.shown} | ${r.target} | ${mark[r.verdict]} |`),
  ].join('\n');
}
