import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { AROUND_TODAY, sandbox } from './support/sandbox.js';
import { previewThenSend, serversOn } from './support/connect.js';

/**
 * What create_request says, line by line (src/tools/create-request.ts): the dry run and the preview
 * with their warnings, the question a person is asked, the progress, sent, declined, and a token used
 * again. Each expected line is built from the sandbox's own records, so a changed word shows.
 */
const sb = await sandbox({ ...AROUND_TODAY, clients: 160 });
const firm = sb.demoFirm;
const server = serversOn(sb);

type Client = (typeof firm.clients)[number];
const isOpen = (r: (typeof firm.requests)[number]) => ['sent', 'in_progress'].includes(r.status);
const inactive = firm.clients.find((c) => c.status && c.status.toLowerCase() !== 'active')!;
const fresh = firm.clients.filter((c) => c.status === 'active' && !firm.requests.some((r) => r.clientId === c.id && isOpen(r)));
const withOpen = firm.clients.find((c) => c.status === 'active' && firm.requests.filter((r) => r.clientId === c.id && isOpen(r)).length === 1)!;
const open = firm.requests.find((r) => r.clientId === withOpen.id && isOpen(r))!;
const label = (c: Client) => `"${c.displayName}" <${c.email}> (id ${c.id})`;
const textOf = (r: CallToolResult) => (r as { text?: string }).text ?? (r.content[0] as { text: string }).text;
const lines = (r: CallToolResult) => textOf(r).split('\n');
const draftLines = (c: Client, title: string) => [
  `To: ${label(c)}`,
  `Title: "${title}"`,
  'Due: no due date',
  "Correctness mode: the service's default",
  'Items: 1 item (1 required):',
  '  1. "W-2" (file, required)',
  `Exact body: {"clientId":"${c.id}","title":${JSON.stringify(title)},"items":[{"name":"W-2","required":true,"type":"file"}]}`,
];
const INACTIVE = `Warnings: The client's status is "${inactive.status}", not active.`;
const NEXT =
  /^Next: show the person this preview\. Only once they agree, call create_request again with the same arguments plus confirmationToken: "dr1\.[^"]+" \(single use, valid until \d{4}-\d\d-\d\d \d\d:\d\d UTC\)\. Do not send without their go-ahead\.$/;
const SENT_DUPLICATE = `Warnings: Sending although the client already has an open request "${open.title}" (id ${open.id}, status ${open.status}, created ${open.createdAt.slice(0, 10)}).`;

describe('the dry run and the preview', () => {
  it('a dry run to a client who is not active: the draft, the warning, the token line', async () => {
    const mcp = await server();
    const r = await mcp.call('create_request', { client: inactive.id, title: 'Words one', items: [{ name: 'W-2' }], dryRun: true });
    expect(lines(r).slice(0, 9)).toEqual(['DRY RUN — nothing was sent.', ...draftLines(inactive, 'Words one'), INACTIVE]);
    expect(lines(r)[9]).toMatch(NEXT);
    expect(lines(r)).toHaveLength(10);
    expect(r.structuredContent).toMatchObject({
      dryRun: true,
      sent: false,
      outcome: 'previewed',
      request: null,
      confirmation: { needed: true },
      warnings: [`The client's status is "${inactive.status}", not active.`],
    });
  });

  it('a duplicate sent anyway: the preview warns, the send says its request id and status and warns again; the token used again says what it did', async () => {
    const mcp = await server();
    const args = { client: withOpen.id, title: open.title, items: [{ name: 'W-2' }], allowDuplicate: true };
    const { preview, sent } = await previewThenSend(mcp, 'create_request', args);
    expect(lines(preview).slice(0, 9)).toEqual([
      "PREVIEW — nothing was sent. Sending needs the person's go-ahead, given as the confirmationToken below.",
      ...draftLines(withOpen, open.title),
      SENT_DUPLICATE,
    ]);
    expect(lines(preview)[9]).toMatch(NEXT);
    expect(preview.structuredContent).toMatchObject({ dryRun: false, confirmation: { needed: true } });
    const out = sent.structuredContent as { request: { id: string; status: string }; dryRun: boolean; sent: boolean; outcome: string; confirmation: unknown };
    expect(lines(sent)).toEqual([`SENT: "${open.title}" to ${label(withOpen)}: request id ${out.request.id}, status ${out.request.status}.`, SENT_DUPLICATE]);
    expect(out).toMatchObject({ dryRun: false, sent: true, outcome: 'sent', confirmation: { needed: false, token: null, expiresAt: null } });
    const token = (preview.structuredContent as { confirmation: { token: string } }).confirmation.token;
    const again = await mcp.call('create_request', { ...args, confirmationToken: token });
    expect(textOf(again)).toBe(`ALREADY USED: this confirmationToken was used before (outcome: sent); nothing more was sent. Request id ${out.request.id}.`);
    expect(again.structuredContent).toMatchObject({
      outcome: 'already_sent',
      sent: false,
      request: { id: out.request.id },
      warnings: [SENT_DUPLICATE.slice('Warnings: '.length)],
    });
  });
});

describe('no warnings, and confirmation never', () => {
  it('a dry run with nothing to warn of: the draft and the token line, no Warnings line', async () => {
    const mcp = await server();
    const c = fresh[2]!;
    const r = await mcp.call('create_request', { client: c.id, title: 'Words five', items: [{ name: 'W-2' }], dryRun: true });
    expect(lines(r).slice(0, 8)).toEqual(['DRY RUN — nothing was sent.', ...draftLines(c, 'Words five')]);
    expect(lines(r)[8]).toMatch(NEXT);
    expect(lines(r)).toHaveLength(9);
  });

  it('DOCREQ_CONFIRM_SEND=never: a dry run needs no token, and a host that can ask is not asked', async () => {
    const questions: string[] = [];
    const mcp = await server({ env: { DOCREQ_CONFIRM_SEND: 'never' }, elicit: (q) => (questions.push(q), { action: 'decline' }) });
    const dry = await mcp.call('create_request', { client: fresh[3]!.id, title: 'Words six', items: [{ name: 'W-2' }], dryRun: true });
    expect(dry.structuredContent).toMatchObject({ confirmation: { needed: false } });
    const plain = await server({ env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const dry2 = await plain.call('create_request', { client: fresh[3]!.id, title: 'Words six', items: [{ name: 'W-2' }], dryRun: true });
    expect(dry2.structuredContent).toMatchObject({ confirmation: { needed: false } });
    const sent = await mcp.call('create_request', { client: fresh[3]!.id, title: 'Words six', items: [{ name: 'W-2' }] });
    expect(sent.structuredContent).toMatchObject({ outcome: 'sent' });
    expect(questions).toEqual([]);
  });

  it('a safety setting that cannot be read: nothing sent, saying why', async () => {
    const mcp = await server({ env: { DOCREQ_CONFIRM_SEND: 'sometimes' } });
    const r = await mcp.call('create_request', { client: fresh[4]!.id, title: 'Words seven', items: [{ name: 'W-2' }], dryRun: true });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^Nothing was sent: sending is disabled until this is fixed: .*DOCREQ_CONFIRM_SEND/);
  });
});

describe('asking the person', () => {
  it('a dry run for a host that can ask: a token, none needed', async () => {
    const mcp = await server({ elicit: () => ({ action: 'accept', content: { confirm: true } }) });
    const r = await mcp.call('create_request', { client: fresh[1]!.id, title: 'Words four', items: [{ name: 'W-2' }], dryRun: true });
    expect(r.structuredContent).toMatchObject({ dryRun: true, outcome: 'previewed', confirmation: { needed: false } });
  });

  it('the question is the draft and its warnings; progress names each step; a decline sends nothing and says so (no "Sending" step)', async () => {
    const questions: string[] = [];
    const mcp = await server({ elicit: (q) => (questions.push(q), { action: 'decline' }) });
    const progress: Progress[] = [];
    const r = await mcp.callWith(
      'create_request',
      { client: inactive.id, title: 'Words two', items: [{ name: 'W-2' }] },
      { onprogress: (p: Progress) => progress.push(p) },
    );
    expect(questions).toEqual([['Send this document request? The service will e-mail the client.', ...draftLines(inactive, 'Words two'), INACTIVE].join('\n')]);
    expect(progress.map((p) => [p.progress, p.total, p.message])).toEqual([
      [0, 3, 'Resolving the client'],
      [1, 3, "Checking the client's open requests"],
    ]);
    expect(textOf(r)).toBe(`NOT SENT: the person declined to send "Words two" to ${label(inactive)}. Nothing was sent.`);
    expect(r.structuredContent).toMatchObject({
      sent: false,
      outcome: 'declined',
      request: null,
      warnings: [`The client's status is "${inactive.status}", not active.`, 'The person declined; nothing was sent.'],
    });
    expect(sb.callsTo('POST', '/api/v1/requests').filter((c) => c.body?.includes('Words two'))).toHaveLength(0);
  });

  it('declined, then asked again and accepted: it sends (nothing of the first call holds it)', async () => {
    let answer: 'decline' | 'accept' = 'decline';
    const mcp = await server({ elicit: () => (answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' }) });
    const args = { client: fresh[5]!.id, title: 'Words eight', items: [{ name: 'W-2' }] };
    expect((await mcp.call('create_request', args)).structuredContent).toMatchObject({ outcome: 'declined' });
    answer = 'accept';
    expect((await mcp.call('create_request', args)).structuredContent).toMatchObject({ outcome: 'sent' });
  });

  it('an active client with no open request: no warning line anywhere', async () => {
    const questions: string[] = [];
    const mcp = await server({ elicit: (q) => (questions.push(q), { action: 'accept', content: { confirm: true } }) });
    const c = fresh[0]!;
    const progress: Progress[] = [];
    const r = await mcp.callWith(
      'create_request',
      { client: c.id, title: 'Words three', items: [{ name: 'W-2' }] },
      { onprogress: (p: Progress) => progress.push(p) },
    );
    expect(progress.map((p) => p.message)).toEqual(['Resolving the client', "Checking the client's open requests", 'Sending']);
    expect(questions[0]).toBe(['Send this document request? The service will e-mail the client.', ...draftLines(c, 'Words three')].join('\n'));
    const out = r.structuredContent as { request: { id: string; status: string }; warnings: string[] };
    expect(textOf(r)).toBe(`SENT: "Words three" to ${label(c)}: request id ${out.request.id}, status ${out.request.status}.`);
    expect(out.warnings).toEqual([]);
  });
});
