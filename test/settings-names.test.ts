import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';

// The built CLI, as a person or a host starts it: a misspelled setting is named with the one it
// resembles, and a misspelled guard (read-only, confirmation, who may sign in) stops the start.
const CLI = new URL('../dist/cli.js', import.meta.url).pathname;

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = childEnv();
  for (const name of Object.keys(base)) if (name.startsWith('DOCREQ_') && name !== 'DOCREQ_STATE_DIR') delete base[name];
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { env: { ...base, ...env }, timeout: 15_000 });
    captured.push(stdout, stderr);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    captured.push(e.stdout, e.stderr);
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('misspelled settings', () => {
  it('names an unknown flag with the closest known one', async () => {
    const r = await run(['--sandbx', '--version']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown option --sandbx (did you mean --sandbox?)');
    const bad = await run(['--read-onyl']);
    expect(bad.stderr).toContain('did you mean --read-only?');
    expect(bad.stderr).not.toMatch(/positional/);
  });

  it('names an unknown DOCREQ_ variable with the closest setting and goes on when it guards nothing', async () => {
    const r = await run(['check', '--sandbox'], { DOCREQ_TIMOUT_MS: '5000' });
    expect(r.stderr).toContain('DOCREQ_TIMOUT_MS is not a setting (did you mean DOCREQ_TIMEOUT_MS?)');
    expect(r.code).toBe(0);
  });

  it.each([
    ['DOCREQ_READONLY', 'DOCREQ_READ_ONLY'],
    ['DOCREQ_READ_0NLY', 'DOCREQ_READ_ONLY'],
    ['DOCREQ_CONFIRMSEND', 'DOCREQ_CONFIRM_SEND'],
    ['docreq_confirm_send', 'DOCREQ_CONFIRM_SEND'],
    ['DOCREQ_AUTH_SENDER', 'DOCREQ_AUTH_SENDERS'],
  ])('refuses to start when %s resembles the guard %s', async (variable, meant) => {
    for (const args of [['--sandbox'], ['--transport', 'http', '--sandbox', '--port', '0'], ['check', '--sandbox']]) {
      const r = await run(args, { [variable]: 'true' });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`${variable} is not a setting (did you mean ${meant}?)`);
      expect(r.stdout).toBe('');
    }
  });
});

describe('docreq-mcp sessions, from the built CLI', () => {
  it('lists on the file store to stdout, and refuses the memory store it cannot reach', async () => {
    const listed = await run(['sessions', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^0 sign-in sessions on the file store at /);
    const memory = await run(['sessions', 'list'], { DOCREQ_STORE: 'memory' });
    expect(memory.code).toBe(1);
    expect(memory.stdout).toBe('');
    expect(memory.stderr).toContain('cannot reach');
  });
});

describe('check agrees with how each mode starts', () => {
  it('--sandbox checks the sandbox (and never advises it)', async () => {
    const r = await run(['check', '--sandbox']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('the service answered');
    expect(r.stdout).not.toContain('try docreq-mcp');
  });

  it('DOCREQ_SANDBOX (the MCP Bundle\'s "try the sandbox" choice) is --sandbox; an unreadable value counts as off', async () => {
    const on = await run(['check'], { DOCREQ_SANDBOX: 'true' });
    expect(on.code).toBe(0);
    expect(on.stdout).toContain('the embedded sandbox');
    const odd = await run(['check'], { DOCREQ_SANDBOX: 'perhaps' });
    expect(odd.code).toBe(1);
    expect(odd.stdout).not.toContain('the embedded sandbox');
  });

  it('team mode with a key per request does not ask for a key of its own', async () => {
    const r = await run(['check', '--transport', 'http'], { DOCREQ_BASE_URL: 'https://docs.example.com' });
    expect(r.stdout).not.toContain('DOCREQ_API_KEY is not set');
    expect(r.stdout).toContain("each request's own key");
  });

  it('team mode with sign-in names a missing key once', async () => {
    const r = await run(['check', '--transport', 'http', '--auth', 'oauth'], { DOCREQ_BASE_URL: 'https://docs.example.com' });
    expect(r.code).toBe(1);
    expect(r.stdout.match(/DOCREQ_API_KEY/g)?.length).toBe(1);
  });

  it.each([[['check', '--sandbox', '--transport', 'http']], [['check', '--sandbox', '--transport', 'http', '--auth', 'oauth']]])('%j passes', async (args) => {
    const r = await run(args);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain('the service answered');
  });
});
