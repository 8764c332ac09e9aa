// npm test, first: the real engines the suite starts on loopback (redis-server, nginx, Chromium) are found, or
// installed where this machine can (Debian or Ubuntu as root: apt-get, as .ci/run does), or named with how to
// install them before anything runs. Nothing is installed behind the person's back on other systems.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Each engine: how a test finds it, the Debian package, and what it is for. */
const NEEDS = [
  { name: 'redis-server', found: () => onPath('redis-server'), apt: 'redis-server', brew: 'redis', why: 'the shared send store and sign-in on a real Redis' },
  { name: 'nginx', found: () => onPath('nginx') || existsSync('/usr/sbin/nginx'), apt: 'nginx', brew: 'nginx', why: 'replicas behind a real proxy' },
  {
    name: 'Chromium at /usr/bin/chromium (or CHROMIUM_PATH)',
    found: () => existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'),
    apt: 'chromium',
    brew: undefined,
    why: 'the pages and the sign-in in a real browser',
  },
];

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

const missing = NEEDS.filter((n) => !n.found());
if (missing.length === 0) process.exit(0);

const root = typeof process.getuid === 'function' && process.getuid() === 0;
if (process.platform === 'linux' && root && onPath('apt-get')) {
  const packages = missing.map((n) => n.apt);
  process.stderr.write(`npm test: installing what the tests start (${packages.join(', ')}) with apt-get\n`);
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  const still = NEEDS.filter((n) => !n.found());
  if (still.length === 0) process.exit(0);
  missing.splice(0, missing.length, ...still);
}

const lines = missing.map((n) => `  - ${n.name}: ${n.why}`);
const how =
  process.platform === 'darwin'
    ? `On macOS: brew install ${
        missing
          .map((n) => n.brew)
          .filter(Boolean)
          .join(' ') || '…'
      }; for Chromium, set CHROMIUM_PATH to a Chromium or Chrome binary.`
    : `On Debian or Ubuntu: sudo apt-get install ${missing.map((n) => n.apt).join(' ')} (Ubuntu's snap Chromium does not work: set CHROMIUM_PATH to another Chromium binary).`;
process.stderr.write(`npm test needs these on this machine, and did not find them:\n${lines.join('\n')}\n${how}\nNothing was run.\n`);
process.exit(1);
