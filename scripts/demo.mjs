// npm run demo: a readable session with the built server on the embedded sandbox, through the
// official SDK's stdio client, the way an assistant host drives it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const bin = new URL('../dist/cli.js', import.meta.url).pathname;
const say = (text = '') => process.stdout.write(`${text}\n`);
const rule = (title) => say(`\n── ${title} ${'─'.repeat(Math.max(0, 70 - title.length))}`);

// The demo's sends are kept in a state folder of its own, removed at the end: the sandbox's records
// never mix with the real sends the user's state folder holds.
const state = mkdtempSync(join(tmpdir(), 'docreq-demo-state-'));
process.on('exit', () => rmSync(state, { recursive: true, force: true }));
const env = { PATH: process.env.PATH, DOCREQ_STATE_DIR: state };
const transport = new StdioClientTransport({ command: process.execPath, args: [bin, '--sandbox', '--log-level', 'warn'], env, stderr: 'pipe' });
// The server names its sandbox's URL on stderr: a second server (another firm's key) is pointed at it below.
let stderrText = '';
const sandboxUrl = new Promise((resolve) => {
  transport.stderr.on('data', (chunk) => {
    process.stderr.write(chunk);
    stderrText += chunk;
    const url = /sandbox API on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderrText)?.[1];
    if (url) resolve(url);
  });
});
const client = new Client({ name: 'docreq-demo', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, (request) => {
  rule('The host asks the person (MCP elicitation)');
  say(request.params.message);
  say('→ the person clicks "Send it" (the demo answers yes)');
  return { action: 'accept', content: { confirm: true } };
});

async function call(name, args = {}, via = client) {
  rule(`${name} ${JSON.stringify(args)}`);
  const result = await via.callTool({ name, arguments: args });
  say(result.content.map((c) => c.text).join('\n'));
  if (result.isError) say('(isError: true)');
  return result;
}

await client.connect(transport);
rule('Server');
say(`${client.getServerVersion()?.name} ${client.getServerVersion()?.version}`);
say(client.getInstructions());
const { tools } = await client.listTools();
rule('Tools');
for (const t of tools) say(`${t.name.padEnd(15)} ${t.title}  (readOnly: ${t.annotations?.readOnlyHint})`);

await call('list_clients', { limit: 5 });
await call('list_clients', { search: 'muller' });
await call('list_requests', { overdue: true, sort: 'due_soonest', limit: 5 });
// "Which 3 clients have the most open requests?" — one grouped call, exact counts per client name.
await call('list_requests', { groupBy: 'client', sort: 'most_open', limit: 3 });
// "Which clients have nothing open?" — clients joined to their requests by name.
await call('list_clients', { requests: 'none_open', limit: 5 });
// A name two clients share: the counts are the name's, and the note names both ids.
await call('list_requests', { client: 'Sam Taylor', limit: 2 });
const clients = (await client.callTool({ name: 'list_clients', arguments: { status: 'active', limit: 1 } })).structuredContent.clients;
const target = clients[0];
const request = {
  client: target.email,
  title: 'Demo: 2025 tax documents',
  items: [{ name: 'W-2 forms' }, { name: 'Did you move in 2025?', type: 'boolean' }, { name: 'Charitable donations total', type: 'number', required: false }],
  correctnessMode: 'advisory',
};
await call('create_request', { client: 'sam taylor', title: request.title, items: request.items, dryRun: true });
await call('create_request', { ...request, dryRun: true });
const sent = await call('create_request', request);
await call('create_request', request);
await call('list_requests', { client: target.displayName, limit: 3 });

// A batch: the same request to four clients; the one who already has it is skipped as a duplicate.
const others = (await client.callTool({ name: 'list_clients', arguments: { status: 'active', offset: 20, limit: 3 } })).structuredContent.clients;
const batch = { clients: [target.id, ...others.map((c) => c.id)], title: request.title, items: request.items, correctnessMode: 'advisory' };
await call('create_request_batch', { ...batch, dryRun: true });
const batchSent = await call('create_request_batch', batch);

// A batch stopped by a plan limit: Harbor Legal (a sandbox firm at its active-request limit), through
// a second server with that firm's key, on the same sandbox. This host has no elicitation: the
// preview hands out one token for the whole batch.
const harbor = new Client({ name: 'docreq-demo-harbor', version: '1.0.0' });
await harbor.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [bin, '--log-level', 'warn'],
    env: { ...env, DOCREQ_API_KEY: 'drk_sandbox_harbor_8c2e5a9d1f3b7a40', DOCREQ_BASE_URL: await sandboxUrl },
    stderr: 'inherit',
  }),
);
rule("A second server: the same sandbox, Harbor Legal LLP's key");
const harborClients = (await harbor.callTool({ name: 'list_clients', arguments: { limit: 4 } })).structuredContent.clients;
const harborBatch = { clients: harborClients.map((c) => c.email), template: 'legal-intake-kyc' };
const harborPreview = await call('create_request_batch', harborBatch, harbor);
const stopped = await call('create_request_batch', { ...harborBatch, confirmationToken: harborPreview.structuredContent.confirmation.token }, harbor);
await harbor.close();

// Where the API document is silent, a firm's service may decide otherwise. The sandbox plays one that reads
// "due_date" and "checklist" and silently drops the fields it does not know (--sandbox-service ignoring). Without a
// service profile the send goes out without its due date and checklist, and the result says so; with a profile
// naming those fields (docs/service-profile.md) it goes out as previewed.
const profile = join(state, 'service-profile.json');
writeFileSync(profile, JSON.stringify({ body: { dueDate: 'due_date', items: 'checklist' } }));
const due = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);
const fits = [];
for (const [label, extra, title] of [
  ['no service profile', {}, 'Demo: engagement letter'],
  [
    `DOCREQ_SERVICE_PROFILE naming its fields: ${JSON.stringify({ body: { dueDate: 'due_date', items: 'checklist' } })}`,
    { DOCREQ_SERVICE_PROFILE: profile },
    'Demo: engagement letter, fitted',
  ],
]) {
  const other = new Client({ name: 'docreq-demo-other', version: '1.0.0' });
  await other.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [bin, '--sandbox', '--sandbox-service', 'ignoring', '--log-level', 'warn'],
      env: { ...env, ...extra },
      stderr: 'ignore',
    }),
  );
  rule(`Another service, which drops fields it does not know; ${label}`);
  const someone = (await other.callTool({ name: 'list_clients', arguments: { status: 'active', offset: 30, limit: 1 } })).structuredContent.clients[0];
  const args = { client: someone.id, title, dueDate: due, items: [{ name: 'Signed engagement letter' }, { name: 'Photo ID' }] };
  const preview = await call('create_request', args, other);
  const result = await call('create_request', { ...args, confirmationToken: preview.structuredContent.confirmation.token }, other);
  fits.push(result.structuredContent?.asPreviewed);
  await other.close();
}
await client.close();
rule('Done');
say(sent.structuredContent?.sent ? 'One request sent on the sandbox; the repeat was refused as a duplicate.' : 'The single send did not happen: see above.');
say(
  `The batch sent ${batchSent.structuredContent?.sent ?? 0} and skipped the client who already had it; Harbor's batch stopped at its plan limit (${stopped.structuredContent?.stoppedBy ?? 'did not stop'}).`,
);
say(
  `Another service: without a profile the send was ${fits[0] === false ? 'flagged as not as previewed' : 'not flagged'}; with one it was ${fits[1] === true ? 'checked as previewed' : 'not checked'}.`,
);
say('Nothing left this machine.');
