import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/log.js';

/**
 * The one logger (src/log.ts): lines at or above its level go to stderr and to every sink still added, each with its
 * level named and every secret redacted; lines below the level go nowhere; a sink that throws takes nothing down.
 */

afterEach(() => {
  vi.restoreAllMocks();
});

function capture(level: Parameters<typeof createLogger>[0], secrets: string[] = []) {
  const lines: string[] = [];
  const logger = createLogger(level, secrets, (line) => lines.push(line));
  return { logger, lines };
}

describe('createLogger', () => {
  it('each level is named in its line; below the level nothing is written', () => {
    const { logger, lines } = capture('warn');
    logger.error('e');
    logger.warn('w');
    logger.info('i');
    logger.debug('d');
    expect(lines).toEqual(['docreq-mcp error: e\n', 'docreq-mcp warn: w\n']);
    const all = capture('debug');
    all.logger.info('i');
    all.logger.debug('d');
    expect(all.lines).toEqual(['docreq-mcp info: i\n', 'docreq-mcp debug: d\n']);
  });

  it('a sink hears what stderr hears, redacted, until it is removed; a sink that throws takes nothing down', () => {
    const { logger, lines } = capture('info', ['s3cr3t-key-123']);
    const heard: string[] = [];
    const remove = logger.addSink((level, message) => heard.push(`${level} ${message}`));
    logger.addSink(() => {
      throw new Error('broken sink');
    });
    logger.info('key s3cr3t-key-123 here');
    remove();
    logger.warn('after removal');
    expect(heard).toEqual(['info key [redacted] here']);
    expect(lines).toEqual(['docreq-mcp info: key [redacted] here\n', 'docreq-mcp warn: after removal\n']);
  });

  it('with no secrets a line passes unchanged; by default it goes to process.stderr, never stdout', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const stdout = vi.spyOn(process.stdout, 'write');
    const logger = createLogger('info');
    logger.info('Stryker was here, and so was everyone');
    expect(stderr).toHaveBeenCalledWith('docreq-mcp info: Stryker was here, and so was everyone\n');
    expect(stdout).not.toHaveBeenCalled();
  });
});
