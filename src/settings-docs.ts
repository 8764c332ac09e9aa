import { SETTINGS } from './settings.js';

/** The settings' documentation, generated from the one table (src/settings.ts): --help, the README's table, manifest.json and server.json. */

/** A setting's help as plain text (for `--help`, manifest.json and server.json): the table's words without Markdown. */
export function plainHelp(help: string): string {
  return help.replace(/`/g, '');
}

/** The options part of `--help`, one line per setting, generated from SETTINGS. */
export function settingsHelp(): string {
  return Object.values(SETTINGS)
    .map((s) => `  ${(s.flag ?? '').padEnd(16)} ${s.env.padEnd(22)} ${plainHelp(s.help)}${s.default !== undefined ? ` (default ${s.default})` : ''}`)
    .join('\n');
}

/** The README's settings table (between its settings-table markers), generated from SETTINGS by scripts/readme.mjs. */
export function settingsTable(): string {
  const code = (text: string | undefined) => (text === undefined ? '—' : `\`${text}\``);
  return [
    '| env | flag | default | meaning |',
    '|---|---|---|---|',
    ...Object.values(SETTINGS).map((s) => `| ${code(s.env)} | ${code(s.flag)} | ${code(s.default)} | ${s.help} |`),
  ].join('\n');
}
