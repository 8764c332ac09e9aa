import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../src/config.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const table = readme.split('<!-- settings-table')[1]!.split('<!-- /settings-table -->')[0]!;
const rows = table
  .split('\n')
  .filter((l) => l.startsWith('| `'))
  .map((l) => l.split('|').map((c) => c.trim().replace(/`/g, '')));

describe('README', () => {
  it('starts with the two set-up commands', () => {
    const firstBlock = readme.split('```sh')[1]!.split('```')[0]!;
    expect(firstBlock).toContain('npm install && npm run demo');
    expect(firstBlock).toContain('npm test');
  });

  it('documents every setting with its flag and default exactly as the code defines them', () => {
    expect(rows.map((r) => r[1])).toEqual(Object.values(SETTINGS).map((s) => s.env));
    for (const setting of Object.values(SETTINGS)) {
      const row = rows.find((r) => r[1] === setting.env)!;
      expect(row[2], setting.env).toBe(setting.flag ?? '—');
      expect(row[3], setting.env).toBe(setting.default ?? '—');
    }
  });
});
