import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';

// A quiet start: what a person reads when they start the built CLI is ours, in
// words they can act on: no third-party runtime warnings, no documents they do not have.
const CLI = new URL('../dist/cli.js', import.meta.url).pathname;

function startAndRead(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let text = '';
    const done = () => {
      child.kill('SIGTERM');
      // The sandbox names its demo keys at start on purpose (they are the try-out's); the key scan
      // checks everything else.
      captured.push(
        text
          .split('\n')
          .filter((line) => !line.includes('sandbox keys'))
          .join('\n'),
      );
      resolve(text);
    };
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`no start line: ${text}`))), 15_000);
    const read = (chunk: Buffer) => {
      text += chunk.toString();
      if (/serving (MCP over HTTP|on stdio)/.test(text)) {
        clearTimeout(timer);
        // Whatever follows the start line within a moment (a provider's late notice) counts too.
        setTimeout(done, 300);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
  });
}

describe('a quiet start', () => {
  it.each([
    [['--transport', 'http', '--auth', 'oauth', '--sandbox', '--host', '127.0.0.1', '--port', '0']],
    [['--transport', 'http', '--sandbox', '--host', '127.0.0.1', '--port', '0']],
    [['--sandbox']],
  ])('%j prints no third-party warning and cites no document users do not have', async (args) => {
    const text = await startAndRead(args);
    expect(text).not.toMatch(/oidc-provider|WARNING|Unsupported runtime|MUST change/);
    expect(text).not.toMatch(/contract §|§\d/);
  });
});
