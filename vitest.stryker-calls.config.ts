import { defineConfig } from 'vitest/config';
import base from './vitest.stryker.config.js';

/**
 * The suite for team mode's HTTP service and its routes and for the tool call every transport makes
 * (stryker.config.mjs SUITES.calls). Every test passes through them, so under the whole suite a survivor of theirs
 * costs minutes; here it costs the files that test the service's front door, its routes and limits, sign-in's
 * routes, the protocol over HTTP and a tool call's refusals, confirmations and logging.
 * `npm run mutate -- --suite calls --mutate …`.
 */
const CALL_FILES = [
  'test/http-routes.test.ts',
  'test/http-service.test.ts',
  'test/tool-call.test.ts',
  'test/team-mode.test.ts',
  'test/front-door.test.ts',
  'test/front-door-http.test.ts',
  'test/protocol-http.test.ts',
  'test/plain-call.test.ts',
  'test/limits-wide.test.ts',
  'test/remote-hosts.test.ts',
  'test/metrics.test.ts',
  'test/logging.test.ts',
  'test/auth.test.ts',
  'test/auth-sessions.test.ts',
  'test/key-scope-guards.test.ts',
  'test/server.test.ts',
  'test/mrtr.test.ts',
  'test/refusals.test.ts',
  'test/form-check.test.ts',
  'test/person-send.test.ts',
  'test/stdio-backpressure.test.ts',
  'test/front-door-edges.test.ts',
  'test/start-up-and-settings.test.ts',
  'test/once.test.ts',
];

export default defineConfig({ ...base, test: { ...base.test, name: 'mutation-calls', include: CALL_FILES, exclude: [] } });
