import { parseArgs } from 'node:util';
import { DocReqApi, describeProxy } from './api/client.js';
import { loadConfig, readSettings, secretsOf, settingValue, startMode, KEY_MISSING, type Config, type SettingsReading } from './config.js';
import { settingFlagOptions, settingsFromFlags } from './settings.js';
import { settingsHelp } from './settings-docs.js';
import { unknownFlag, unknownVariables } from './settings-names.js';
import { SendLedger } from './send/ledger.js';
import { Confirmations } from './send/token.js';
import { openStore, RedisStore, storeReach } from './store/index.js';
import { sandboxStateDir } from './sandbox-state.js';
import { createLogger } from './log.js';
import { redactor } from './text/redact.js';
import { serveStdio as serveStdioEntry } from '@modelcontextprotocol/server/stdio';
import { LineStdioTransport } from './transport/stdio.js';
import type { Sandbox } from './sandbox/service.js';
import { explain } from './mcp/results.js';
import { createServer } from './mcp/server.js';
import { rehearseTeamMode, rehearsingAfterInitialize } from './mcp/rehearsal.js';
import { loadTemplates, readyTemplates } from './templates/load.js';
import { templatesStatus } from './templates/render.js';
import { readyServiceProfile } from './service-profile.js';
import { checkFit } from './check-fit.js';
import { DEFAULT_PROFILE } from './domain/service-profile.js';
import { VERSION } from './version.js';

/** `docreq-mcp sandbox` listens here unless --port says otherwise; team mode's default is 8787 (DOCREQ_HTTP_PORT), so both run at once. */
const SANDBOX_PORT = 8790;

/**
 * How the person started this CLI, for every command line it shows them: `node dist/cli.js` from a clone (the file
 * itself was run), `docreq-mcp` once installed (a bin shim or npx).
 */
const SELF = /(^|[\\/])cli\.js$/.test(process.argv[1] ?? '') ? 'node dist/cli.js' : 'docreq-mcp';

const HELP = `docreq-mcp ${VERSION}: an MCP server for a firm's Document Request Service.

Usage (from a clone; once published, npx -y docreq-mcp … runs the same):
  ${SELF} [options]
                                    serve MCP over stdio (what an assistant host runs)
  ${SELF} --sandbox [options]
                                    serve MCP against the embedded sandbox API (no account needed)
  ${SELF} sandbox [--port N] [--clients N] [--requests N]
                                    run only the sandbox API (port ${SANDBOX_PORT} unless --port); prints its base URL and demo keys
  ${SELF} check
                                    check the configuration by calling the API once
  ${SELF} sessions list | end --email ADDRESS | end --all
                                    team mode with sign-in: list or end sign-in sessions on the shared store
  ${SELF} --transport http [--port N] [--host H] [--sandbox]
                                    team mode: MCP over Streamable HTTP at /mcp, the key per request

Options (each has an environment twin; the flag wins):
${settingsHelp()}
  --help, --version

The key is read from DOCREQ_API_KEY or DOCREQ_API_KEY_FILE only, never from the command line.
Logs go to stderr; stdout carries only the MCP protocol.`;

function fail(message: string): never {
  process.stderr.write(`docreq-mcp: ${message}\nRun ${SELF} --help for usage.\n`);
  process.exit(2);
}

function parse(argv: string[]) {
  if (argv.some((a) => a === '--api-key' || a.startsWith('--api-key='))) {
    fail('the key is never taken from the command line (it would show in process lists); set DOCREQ_API_KEY or DOCREQ_API_KEY_FILE.');
  }
  const options = {
    ...settingFlagOptions(),
    port: { type: 'string' },
    clients: { type: 'string' },
    requests: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  } as const;
  try {
    return parseArgs({ args: argv, allowPositionals: true, options });
  } catch (error) {
    const e = error as Error & { code?: string };
    // Node's own text for an unknown option is about positionals; name the closest option instead.
    const flag = e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'(-[^']*)'/.exec(e.message)?.[1] : undefined;
    fail(flag ? unknownFlag(flag.split('=')[0]!, Object.keys(options)) : e.message);
  }
}

function count(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) fail(`--${name} must be a whole number, got "${text}".`);
  return n;
}

function serveStdio(config: Config, sandbox?: Sandbox): Promise<void> {
  const logger = createLogger(config.logLevel, secretsOf(config));
  for (const problem of config.problems) logger.warn(`configuration: ${problem}`);
  if (config.problems.length)
    logger.warn(
      'every tool call will answer with what to set; to try it without an account, add --sandbox to the command (in the MCP Bundle: turn on the sandbox).',
    );
  // The send store: once-only across this user's processes (file), replicas (redis) or this process (memory).
  const store = openStore(config.store, (message) => logger.error(message));
  logger.debug(`send store: ${storeReach(store, false).note}`);
  const sending = { ledger: new SendLedger(store), confirmations: new Confirmations(config.tokenSecret) };
  // SDK v2's stdio entry decides the era from the opening message (initialize: 2025-11-25; a
  // per-request envelope or server/discover: 2026-07-28) and pins one server per connection; our own
  // transport underneath keeps the line cap, the answered junk and the backpressure.
  const transport = new LineStdioTransport();
  // Once initialized and idle, the first list call is rehearsed on a private server (src/mcp/rehearsal.ts), so the
  // host's first call runs code V8 has already compiled; it pauses while a message waits or is answered, and ends
  // once a real tool call has been answered.
  let called = false;
  const rehearsal = {
    idle: () => transport.whenIdle(),
    busy: () => transport.busy,
    moot: () => called,
    sending,
    onError: (error: Error) => logger.debug(`rehearsal: ${error.message}`),
  };
  const onCall = () => void (called = true);
  const mcp = serveStdioEntry(() => rehearsingAfterInitialize(createServer(config, { logger, sending, onCall }), config, rehearsal), {
    transport,
    onerror: (error) => logger.debug(`stdio: ${error.message}`),
  });
  let closing = false;
  const shutdown = (why: string) => {
    if (closing) return;
    closing = true;
    logger.debug(`shutting down: ${why}`);
    // Never wait long on an in-flight call: a POST is not re-sent, and the host wants us gone.
    setTimeout(() => process.exit(0), 1_500).unref();
    void Promise.allSettled([mcp.close(), sandbox?.close(), store.close()]).then(() => process.exit(0));
  };
  process.stdin.on('end', () => shutdown('stdin ended'));
  process.stdin.on('close', () => shutdown('stdin closed'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  logger.info(
    `docreq-mcp ${VERSION} serving on stdio${config.api ? ` for ${new URL(config.api.baseUrl).origin}` : ' (not configured)'}${config.readOnly ? ', read-only' : ''}`,
  );
  return Promise.resolve();
}

/** `check`: the send store can be written and read back, and what once-only holds across. */
async function checkStore(config: Config, teamMode: boolean, out: (line: string) => void): Promise<boolean> {
  const store = openStore(config.store);
  try {
    if (store instanceof RedisStore) await store.ready();
    const key = `check:probe:${process.pid}`;
    await store.set(key, 'ok', 10_000);
    if ((await store.get(key)) !== 'ok') throw new Error('an entry written could not be read back');
    await store.delete(key);
    const reach = storeReach(store, teamMode);
    // The store is named once, first (the note names it too, for the log's one line).
    out(`${teamMode && !reach.shared ? '!' : '✓'} send store: ${store.name}: ${reach.note.replace(` (${store.name})`, '')}`);
    return false;
  } catch (error) {
    out(`✗ ${(error as Error).message}`);
    return true;
  } finally {
    await store.close();
  }
}

/** What `check` says each DOCREQ_CONFIRM_SEND value does, in the words of the person who set it. */
const CONFIRM_WORDS: Record<Config['confirmSend'], string> = {
  auto: 'the person confirms it (Send on the preview page where the host shows it, else the host asks them, else the preview gives a one-time confirmation to pass back)',
  person: "only the person's own act sends it: Send on the preview page, or the host's own form; a host with neither cannot send",
  always: "the person confirms it in the host's own form; a host that cannot show one cannot send",
  never: 'no confirmation (DOCREQ_CONFIRM_SEND=never, for unattended scripts)',
};

/** How `check` runs: stdio or team mode, against the configured service or the embedded sandbox. */
interface CheckMode {
  team: boolean;
  /** Team mode's sign-in is oauth (DOCREQ_AUTH, --auth). */
  oauth: boolean;
  /** The sandbox started for this check (--sandbox): its key and address stand in for the settings. */
  sandbox?: Sandbox;
}

async function check(config: Config, mode: CheckMode, reading: SettingsReading): Promise<number> {
  // Whatever the service echoes (a key in an error body), no secret reaches this output.
  const redact = redactor(secretsOf(config));
  const out = (line: string) => process.stdout.write(`${redact(line)}\n`);
  out(`docreq-mcp ${VERSION} check${mode.sandbox ? ' (the embedded sandbox: nothing reaches a real service)' : ''}`);
  const { oauth } = mode;
  // Team mode: how people are let in (the key per request, or sign-in with the firm's identity provider).
  let signInProblem = false;
  if (mode.team && mode.sandbox && oauth) out("✓ sign-in: oauth through the sandbox's demo identity provider (demo staff accounts; see the README)");
  else if (mode.team && mode.sandbox)
    out(`✓ sign-in: none: each request brings a key (Authorization: Bearer <key>); the sandbox's demo key is used for this check`);
  else if (mode.team) signInProblem = await (await import('./auth/check.js')).checkSignIn(reading.flags, reading.env, out);
  // In team mode the key is not the service's own setting: it comes with each request (bearer), or
  // from sign-in's DOCREQ_API_KEY_FILE, which the sign-in lines above already check.
  const problems = mode.team ? config.problems.filter((p) => p !== KEY_MISSING) : config.problems;
  for (const problem of problems) out(`✗ ${problem}`);
  // Templates are reported whatever else is wrong: a bad file disables only templates, never sending.
  const templates = loadTemplates(config.templatesFile);
  out(`${templates.problems.length ? '✗' : '✓'} ${templatesStatus(templates)}`);
  const storeProblem = async () => {
    const failed = await checkStore(config, mode.team, out);
    // Replicas sharing a store, each with its own random secret: a preview on one cannot be sent from another.
    if (mode.team && config.store.backend === 'redis' && !reading.text('tokenSecret')?.trim()) {
      out(
        '! DOCREQ_TOKEN_SECRET is not set while DOCREQ_STORE_URL is (a store replicas share): a confirmation token issued by another replica will be refused: set DOCREQ_TOKEN_SECRET, the same on every replica (openssl rand -hex 32)',
      );
    }
    return failed;
  };
  const failed = (more: boolean) => (problems.length || templates.problems.length || config.sendingDisabled || signInProblem || more ? 1 : 0);
  if (!config.api) {
    if (mode.team && !problems.length && !oauth) {
      // Bearer team mode holds no key: nothing to call the service with, and nothing missing.
      const stored = await storeProblem();
      if (config.sendingDisabled) out(`✗ sending is disabled until this is fixed: ${config.sendingDisabled}`);
      out("✓ the service is called with each request's own key; set DOCREQ_API_KEY for this check only to try one");
      return failed(stored);
    }
    out(mode.sandbox ? 'Fix the above.' : `Fix the above, or try ${SELF} check --sandbox to see a working set-up without an account.`);
    return 1;
  }
  out(`✓ base URL ${config.api.baseUrl}`);
  out(`✓ key set (${config.api.apiKey.length} characters; not shown)`);
  out(`✓ network: ${describeProxy(config.api.baseUrl)}`);
  const profile = config.serviceProfile ?? DEFAULT_PROFILE;
  const api = new DocReqApi({ ...config.api, timeoutMs: config.timeoutMs, maxResponseBytes: config.maxResponseMb * 1024 * 1024, profile });
  try {
    // How the service fits the profile: one read of each list, never a POST (check-fit.ts).
    const lines: string[] = [];
    const fit = await checkFit(api, profile, (line) => lines.push(line));
    out(`✓ the service answered: the key is accepted and the firm has ${fit.clients} clients`);
    for (const line of lines) out(line);
    if (config.sendingDisabled) out(`✗ sending is disabled until this is fixed: ${config.sendingDisabled}`);
    else if (config.readOnly) out('✓ read-only: no tool that sends is offered');
    else {
      out(`✓ sending is offered; before each send: ${CONFIRM_WORDS[config.confirmSend]}`);
      // The plan's limits are published nowhere a read can see; only a refused send names one. Say so, not "✓".
      out(
        `  plan limits: not checked (the service publishes them only when it refuses a send); the firm has ${fit.open} open ${fit.open === 1 ? 'request' : 'requests'} now. ` +
          'A send the plan stops is refused and nothing is e-mailed; the answer says what the firm can do (complete or archive requests, or upgrade the plan).',
      );
    }
    return failed(await storeProblem());
  } catch (error) {
    out(`✗ ${explain(error) ?? (error as Error).message}`);
    return 1;
  } finally {
    await api.close();
  }
}

/**
 * The settings with the sandbox's demo key and address in place of the service's. Its sends are kept apart from the
 * person's own (a `sandbox` folder inside the state folder) unless a state folder is named.
 */
function sandboxConfig(reading: SettingsReading, sandbox: Sandbox): Config {
  const apart = reading.text('stateDir') === undefined ? { DOCREQ_STATE_DIR: sandboxStateDir(reading.env) } : {};
  return loadConfig(reading.flags, {
    ...reading.env,
    ...apart,
    DOCREQ_API_KEY: sandbox.keys.demo,
    DOCREQ_API_KEY_FILE: undefined,
    DOCREQ_BASE_URL: sandbox.url,
  });
}

/** `docreq-mcp sessions …`: sign-in sessions on the shared store (src/auth/sessions.ts); its list is the command's own output. */
async function sessionsCommand(): Promise<void> {
  const { sessionsCli } = await import('./auth/sessions.js');
  process.exitCode = await sessionsCli(
    process.argv.slice(3),
    readSettings().env,
    (line) => void process.stdout.write(`${line}\n`),
    (line) => void process.stderr.write(`${line}\n`),
  );
}

type Seed = Parameters<typeof import('./sandbox/service.js').startSandbox>[0];

/** The sandbox, loaded only when asked for. */
async function startSandbox(options: Seed) {
  return (await import('./sandbox/service.js')).startSandbox(options);
}

/** `docreq-mcp sandbox`: the sandbox service alone, its address and keys on stdout, until Ctrl-C. */
async function serveSandboxAlone(port: number, seed: Seed): Promise<void> {
  const sandbox = await startSandbox({ port, ...seed });
  const firm = sandbox.demoFirm;
  process.stdout.write(
    `Sandbox Document Request Service on ${sandbox.url}\n` +
      `  DOCREQ_BASE_URL=${sandbox.url}\n` +
      `  DOCREQ_API_KEY=${sandbox.keys.demo}   (${firm.name}: ${firm.clients.length} clients, ${firm.requests.length} requests)\n` +
      `  other keys: ${sandbox.keys.harbor} (active-request limit reached), ${sandbox.keys.northwind} (billing limit reached), ${sandbox.keys.revoked} (revoked)\n` +
      'Ctrl-C stops it.\n',
  );
  const stop = () => void sandbox.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** `docreq-mcp check`: against the service configured, or (with --sandbox) a sandbox started for it and stopped after. */
async function runCheck(reading: SettingsReading, mode: ReturnType<typeof startMode>, seed: Seed): Promise<void> {
  const { team, oauth } = mode;
  if (!mode.sandbox) {
    process.exitCode = await check(loadConfig(reading.flags, reading.env), { team, oauth }, reading);
    return;
  }
  const sandbox = await startSandbox(seed);
  try {
    process.exitCode = await check(sandboxConfig(reading, sandbox), { team, oauth, sandbox }, reading);
  } finally {
    await sandbox.close();
  }
}

async function main(): Promise<void> {
  // Sign-in sessions on the shared store (src/auth/sessions.ts): list, end one person's, end everyone's.
  // A command of the CLI (not the MCP server): its list is the command's own output, as check's is.
  if (process.argv[2] === 'sessions') return sessionsCommand();
  const { values, positionals } = parse(process.argv.slice(2));
  if (values.help) return void process.stdout.write(`${HELP}\n`);
  if (values.version) return void process.stdout.write(`${VERSION}\n`);
  const command = positionals[0];
  if (positionals.length > 1 || (command && command !== 'sandbox' && command !== 'check')) fail(`unknown command "${positionals.join(' ')}".`);

  // A misspelled variable is named with the setting it resembles; one resembling a guard stops the start.
  // The settings, read once: flags and environment (config.ts).
  const reading = readSettings(settingsFromFlags(values));
  const unknown = unknownVariables(reading.env);
  // The YAML reader is loaded only when a templates file is named (templates/load.ts); the setting alone is read, no file.
  await readyTemplates(settingValue(reading, 'templatesFile').value);
  await readyServiceProfile(settingValue(reading, 'serviceProfile').value);
  for (const line of unknown.warn) process.stderr.write(`docreq-mcp warning: ${line}\n`);
  if (unknown.stop.length) fail(unknown.stop.join('\n'));
  // --sandbox, or DOCREQ_SANDBOX (the MCP Bundle's "try the sandbox" choice); unreadable counts as off.
  const mode = startMode(reading);
  started = { command, transport: mode.transport };
  const useSandbox = mode.sandbox;
  // Which service the sandbox plays (--sandbox-service): ours, or another that differs where the API document is silent.
  const playing = settingValue(reading, 'sandboxService');
  if (playing.problem) fail(playing.problem);
  const dialect = playing.value && playing.value !== 'ours' ? { dialect: playing.value } : {};
  const seed = { clients: count(values.clients, 'clients'), requests: count(values.requests, 'requests'), ...dialect };

  if (command === 'sandbox') return serveSandboxAlone(count(values.port, 'port') ?? SANDBOX_PORT, seed);
  if (command === 'check') return runCheck(reading, mode, seed);
  if (mode.transportProblem) fail(mode.transportProblem);
  if (mode.team) {
    // Team mode, loaded only when asked for: MCP over Streamable HTTP, the key per request.
    const service = await (await import('./transport/http.js')).serveHttp(reading, { sandbox: useSandbox ? seed : undefined });
    rehearseTeamMode(reading, () => service.inflight > 0);
    return;
  }
  if (useSandbox) {
    const sandbox = await startSandbox(seed);
    const config = sandboxConfig(reading, sandbox);
    process.stderr.write(`docreq-mcp info: sandbox API on ${sandbox.url} (${sandbox.demoFirm.name}); nothing reaches a real service\n`);
    return serveStdio(config, sandbox);
  }
  return serveStdio(loadConfig(reading.flags, reading.env));
}

/** What went wrong at start, in plain words (never a stack trace): a port in use names the setting that moves it. */
function startFailure(error: unknown, command: string | undefined, transport: string | undefined): string {
  const e = error as NodeJS.ErrnoException & { port?: number; address?: string };
  const where = e.address !== undefined && e.port !== undefined ? `${e.address}:${e.port}` : 'the port';
  const moveIt = command === 'sandbox' ? `${SELF} sandbox --port N` : transport === 'http' ? '--port N (or DOCREQ_HTTP_PORT)' : '--port N';
  if (e.code === 'EADDRINUSE') return `${where} is already in use (another docreq-mcp, or another program, listens there): choose another port with ${moveIt}.`;
  if (e.code === 'EACCES') return `not allowed to listen on ${where}: choose a port above 1023 with ${moveIt}.`;
  if (e.code === 'EADDRNOTAVAIL') return `${where} is not an address of this machine: check --host (DOCREQ_HTTP_HOST).`;
  const message = error instanceof Error ? error.message : String(error);
  return `could not start: ${message.split('\n')[0]}`;
}

/** What main read before anything could fail to start: the command and the transport, for startFailure's words. */
let started: { command: string | undefined; transport: string | undefined } = { command: undefined, transport: undefined };

main().catch((error: unknown) => {
  process.stderr.write(`docreq-mcp: ${startFailure(error, started.command === 'sandbox' ? started.command : undefined, started.transport)}\n`);
  process.exit(1);
});
