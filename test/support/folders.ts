// This run's own folder (test/global-setup.ts), and the environment a spawned server starts from.

/** This run's own folder (test/global-setup.ts): every state, home and capture folder of the suite is inside it. */
export function suiteFolder(): string {
  const suite = process.env.DOCREQ_TEST_SUITE_DIR;
  if (!suite) throw new Error('DOCREQ_TEST_SUITE_DIR is not set: the suite runs with test/global-setup.ts (vitest.config.ts)');
  return suite;
}

/**
 * The environment a spawned server starts from: PATH, and the suite's home, XDG folders and this test
 * file's state folder (test/global-setup.ts, test/setup.ts), so that no child reads or writes the user's
 * own folders, even one started without DOCREQ_STATE_DIR.
 */
export function childEnv(): Record<string, string> {
  suiteFolder();
  const names = [
    'PATH',
    'HOME',
    'USERPROFILE',
    'DOCREQ_STATE_DIR',
    'XDG_STATE_HOME',
    'XDG_DATA_HOME',
    'XDG_CONFIG_HOME',
    'XDG_CACHE_HOME',
    'LOCALAPPDATA',
    'APPDATA',
  ];
  return Object.fromEntries(names.map((name) => [name, process.env[name] ?? '']));
}
