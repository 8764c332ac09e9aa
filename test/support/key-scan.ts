// What the tests captured for the key scan: test/setup.ts writes it out after each file, and
// test/global-setup.ts scans it for any sandbox key at the end of the run.

/** Everything any test captured (logs, results, errors): scanned for the key at the end. */
export const captured: string[] = [];
