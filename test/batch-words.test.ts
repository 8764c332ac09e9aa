import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { AROUND_TODAY, sandbox } from './support/sandbox.js';
import { confirmingPerson, previewThenSend, serversOn } from './support/connect.js';

/**
 * What create_request_batch says, line by line (src/tools/create-request-batch.ts): the dry run and
 * the preview with every recipient's line and reason, the question a person is asked, the progress
 * messages, the report after sending, and what a stop at the plan limit adds. Each expected line is
 * built from the sandbox's own records, so a changed word, count or separator shows.
 */
const sb = await sandbox({ ...AROUND_TODAY, clients: 160 });
const firm = sb.demoFirm;
const server = serversOn(sb);
const limit = firm.activeRequestLimit;
afterEach(() => {
  firm.activeRequestLimit = limit;
});

type Client = (typeof firm.clients)[number];
const byName = new Map<string, Client[]>();
for (const c of firm.clients) byName.set(c.displayName, [...(byName.get(c.displayName) ?? []), c]);
const [sharedName, namesakes] = [...byName].find(([, cs]) => cs.length === 2)!;
const unique = firm.clients.filter(
  (c) =>
    c.status === 'active' &&
    byName.get(c.displayName)!.length === 1 &&
    !firm.requests.some((r) => r.clientId === c.id && ['sent', 'in_progress'].includes(r.status)),
);
let next = 0;
const take = () => unique[next++]!;
const label = (c: Client) => `"${c.displayName}" <${c.email}> (id ${c.id})`;
const AMBIGUOUS = `ambiguous: matches 2 clients: ${namesakes.map(label).join(', ')}; pass the id of the one meant`;
let titles = 0;
const title = () => `Batch words ${++titles}`;
const openOf = (c: Client) => firm.requests.find((r) => r.clientId === c.id && ['sent', 'in_progress'].includes(r.status));
const withOpen = firm.clients.find(
  (c) =>
    c.status === 'active' &&
    byName.get(c.displayName)!.length === 1 &&
    firm.requests.filter((r) => r.clientId === c.id && ['sent', 'in_progress'].includes(r.status)).length === 1,
)!;
const open = openOf(withOpen)!;
const openLine = `an open request "${open.title}" (id ${open.id}, status ${open.status}, created ${open.createdAt.slice(0, 10)})`;
const textOf = (r: CallToolResult) => (r as { text?: string }).text ?? (r.content[0] as { text: string }).text;
const lines = (r: CallToolResult) => textOf(r).split('\n');

describe('the dry run and the preview', () => {
  it('a dry run: the head, one line per recipient with its reason, the draft, and the token line', async () => {
    const mcp = await server();
    const [a, b] = [take(), take()];
    const r = await mcp.call('create_request_batch', {
      clients: [a.id, b.displayName, sharedName, withOpen.id],
      title: open.title,
      items: [{ name: 'W-2' }],
      dryRun: true,
    });
    expect(r.isError).toBeFalsy();
    expect(lines(r).slice(0, 11)).toEqual([
      'DRY RUN — nothing was sent. 2 will send, 2 skipped (of 4).',
      `  1. ${label(a)}: will send`,
      `  2. ${label(b)}: will send`,
      `  3. "${sharedName}": skipped — ${AMBIGUOUS}`,
      `  4. ${label(withOpen)}: skipped — duplicate: the client already has ${openLine} (allowDuplicate: true sends a NEW one)`,
      `Title: "${open.title}"`,
      'Due: no due date',
      "Correctness mode: the service's default",
      'Items: 1 item (1 required):',
      '  1. "W-2" (file, required)',
      `Exact body for each (clientId set per recipient): {"title":${JSON.stringify(open.title)},"items":[{"name":"W-2","required":true,"type":"file"}]}`,
    ]);
    expect(lines(r)[11]).toMatch(
      /^Next: show the person this preview\. Only once they agree, call create_request_batch again with the same arguments plus confirmationToken: "dr1\.[^"]+" \(single use, valid until \d{4}-\d\d-\d\d \d\d:\d\d UTC\)\. Do not send without their go-ahead\.$/,
    );
    expect(lines(r)).toHaveLength(12);
    const out = r.structuredContent as {
      dryRun: boolean;
      sent: number;
      recipients: { client: string; clientId: string | null; displayName: string | null; outcome: string; reason: string | null }[];
      warnings: string[];
    };
    expect(out.dryRun).toBe(true);
    expect(out.sent).toBe(0);
    expect(out.warnings).toEqual([]);
    expect(out.recipients.map((x) => [x.client, x.clientId, x.displayName, x.outcome])).toEqual([
      [a.id, a.id, a.displayName, 'will_send'],
      [b.displayName, b.id, b.displayName, 'will_send'],
      [sharedName, null, null, 'skipped'],
      [withOpen.id, withOpen.id, withOpen.displayName, 'skipped'],
    ]);
  });

  it('nothing to send: every recipient skipped, said so as an error-free result without a token', async () => {
    const mcp = await server();
    const r = await mcp.call('create_request_batch', { clients: [sharedName, 'nobody@nowhere.example'], title: title(), items: [{ name: 'W-2' }] });
    expect(lines(r)[0]).toBe('NOTHING TO SEND — nothing was sent: 0 will send, 2 skipped (of 2).');
    expect(lines(r)[1]).toBe(`  1. "${sharedName}": skipped — ${AMBIGUOUS}`);
    expect(lines(r)[2]).toMatch(/^ {2}2\. "nobody@nowhere\.example": skipped — no client has this id, e-mail or exact name; closest: "/);
    expect(lines(r).at(-1)).toBe('No recipient can be sent this request; see the reasons above.');
    expect((r.structuredContent as { confirmation: unknown }).confirmation).toMatchObject({ needed: false, token: null, expiresAt: null });
  });

  it('a duplicate sent anyway (allowDuplicate): its warning in the preview and in the report, and the report lines with request ids', async () => {
    const mcp = await server();
    const a = take();
    const args = { clients: [a.id, sharedName, withOpen.id], title: open.title, items: [{ name: 'W-2' }], allowDuplicate: true, dueDate: '2026-04-30' };
    const { preview, sent } = await previewThenSend(mcp, 'create_request_batch', args);
    const warning = `Warnings: ${label(withOpen)}: sending although the client already has ${openLine}.`;
    expect(lines(preview).slice(0, 6)).toEqual([
      "PREVIEW — nothing was sent. 2 will send, 1 skipped (of 3). Sending needs the person's go-ahead, given as the confirmationToken below.",
      `  1. ${label(a)}: will send`,
      `  2. "${sharedName}": skipped — ${AMBIGUOUS}`,
      `  3. ${label(withOpen)}: will send`,
      warning,
      `Title: "${open.title}"`,
    ]);
    expect(lines(preview)).toContain('Due: 2026-04-30');
    const ids = (sent.structuredContent as { recipients: { request: { id: string } | null }[] }).recipients.map((x) => x.request?.id);
    expect(lines(sent)).toEqual([
      'SENT: 2 sent, 0 may have been sent, 0 not sent, 1 skipped (of 3).',
      `  1. ${label(a)}: sent, request id ${ids[0]}`,
      `  2. "${sharedName}": skipped — ${AMBIGUOUS}`,
      `  3. ${label(withOpen)}: sent, request id ${ids[2]}`,
      warning,
    ]);
    expect(sent.isError).toBeFalsy();
    expect(preview.structuredContent).toMatchObject({ dryRun: false, confirmation: { needed: true } });
    expect(sent.structuredContent).toMatchObject({ dryRun: false, sent: 2, confirmation: { needed: false, token: null, expiresAt: null } });
  });

  it('a dry run for a host that can ask the person: a token, but none needed (the person is asked when it sends)', async () => {
    const mcp = await server({ elicit: confirmingPerson() });
    const r = await mcp.call('create_request_batch', { clients: [take().id, sharedName], title: title(), items: [{ name: 'W-2' }], dryRun: true });
    expect(r.structuredContent).toMatchObject({ dryRun: true, confirmation: { needed: false } });
    expect((r.structuredContent as { confirmation: { token: string } }).confirmation.token).toMatch(/^dr1\./);
  });
});

describe('each reason a recipient is skipped', () => {
  it('the same client twice, a client not active (sent with the go-ahead, warned), and a batch sent again: already sent by this server, counted apart', async () => {
    const mcp = await server();
    const [a, b] = [take(), take()];
    const inactive = firm.clients.find((c) => c.status === 'inactive' && byName.get(c.displayName)!.length === 1)!;
    const t = title();
    const args = { clients: [a.id, b.id, a.email, inactive.id], title: t, items: [{ name: 'W-2' }] };
    const { preview, sent } = await previewThenSend(mcp, 'create_request_batch', args);
    expect(lines(preview).slice(0, 5)).toEqual([
      "PREVIEW — nothing was sent. 3 will send, 1 skipped (of 4). Sending needs the person's go-ahead, given as the confirmationToken below.",
      `  1. ${label(a)}: will send`,
      `  2. ${label(b)}: will send`,
      `  3. ${label(a)}: skipped — the same client as recipient 1`,
      `  4. ${label(inactive)}: will send`,
    ]);
    expect(lines(preview)[5]).toBe(`Warnings: ${label(inactive)}: The client's status is "inactive", not active.`);
    expect(lines(sent)[0]).toBe('SENT: 3 sent, 0 may have been sent, 0 not sent, 1 skipped (of 4).');
    const again = await mcp.call('create_request_batch', { ...args, dryRun: true });
    expect(lines(again)[0]).toBe('NOTHING TO SEND — nothing was sent: 0 will send, 1 skipped, 3 already sent (of 4).');
    expect(lines(again)[1]).toMatch(
      new RegExp(
        `^ {2}1\\. ${label(a).replace(/[().]/g, '\\$&')}: already sent — this server sent "${t}" to this client at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(request id \\S+\\)$`,
      ),
    );
  });

  it('a name five clients share lists all five; six, the first five and how many more', async () => {
    const template = firm.clients.find((c) => c.status === 'active')!;
    const add = (n: number) => firm.clients.push({ ...template, id: `namesake-${n}`, displayName: 'Pat Namesake', email: `pat${n}@namesake.example` });
    for (let n = 1; n <= 5; n++) add(n);
    sb.invalidateLists();
    const mcp = await server();
    const five = firm.clients.filter((c) => c.displayName === 'Pat Namesake');
    const r5 = await mcp.call('create_request_batch', { clients: ['Pat Namesake', take().id], title: title(), items: [{ name: 'W-2' }], dryRun: true });
    expect(lines(r5)[1]).toBe(`  1. "Pat Namesake": skipped — ambiguous: matches 5 clients: ${five.map(label).join(', ')}; pass the id of the one meant`);
    add(6);
    sb.invalidateLists();
    const r6 = await mcp.call('create_request_batch', { clients: ['Pat Namesake', take().id], title: title(), items: [{ name: 'W-2' }], dryRun: true });
    expect(lines(r6)[1]).toBe(
      `  1. "Pat Namesake": skipped — ambiguous: matches 6 clients: ${five.map(label).join(', ')}, …1 more; pass the id of the one meant`,
    );
  });
});

describe('asking the person, progress, and a stop at the plan limit', () => {
  it('the question names who is sent to and who is not; progress counts each send; the report says how to send the rest once there is room', async () => {
    const questions: string[] = [];
    const mcp = await server({ elicit: confirmingPerson(questions) });
    const [a, b, c] = [take(), take(), take()];
    sb.setActiveRequestRoom(SANDBOX_KEYS.demo, 1);
    const progress: Progress[] = [];
    const r = await mcp.callWith(
      'create_request_batch',
      { clients: [a.id, sharedName, b.id, c.id], title: title(), items: [{ name: 'W-2' }] },
      { onprogress: (p: Progress) => progress.push(p) },
    );
    expect(questions).toHaveLength(1);
    expect(questions[0]!.split('\n').slice(0, 7)).toEqual([
      'Send this document request to 3 clients? The service will e-mail each one.',
      `- ${label(a)}`,
      `- ${label(b)}`,
      `- ${label(c)}`,
      'Not sent (1):',
      `- "${sharedName}": the person chose none of the 2 clients it matches`,
      `Title: "Batch words ${titles}"`,
    ]);
    const messages = progress.map((p) => p.message);
    expect(messages).toContain('Sending to 3 clients');
    expect(messages).toContain('1 of 3: sent');
    expect(messages).toContain('2 of 3: not sent');
    const text = lines(r);
    expect(text[0]).toMatch(/^SENT: 1 sent, 0 may have been sent, 2 not sent, 1 skipped \(of 4\)\. STOPPED by the firm's plan limit \(at recipient 3\): /);
    expect(text.at(-1)).toBe(
      'Calling create_request_batch again with the same arguments sends only to the clients not yet sent (none is sent twice), once the firm has room: complete or archive requests, or upgrade the plan.',
    );
    expect(r.isError).toBeFalsy();
  });

  it('one client: the question and the progress say "client", not "clients"; nothing sent and a failure is an error result', async () => {
    const questions: string[] = [];
    const mcp = await server({ elicit: confirmingPerson(questions) });
    const a = take();
    sb.setActiveRequestRoom(SANDBOX_KEYS.demo, 0);
    const progress: Progress[] = [];
    const r = await mcp.callWith(
      'create_request_batch',
      { clients: [a.id, sharedName], title: title(), items: [{ name: 'W-2' }] },
      { onprogress: (p: Progress) => progress.push(p) },
    );
    expect(questions[0]!.split('\n')[0]).toBe('Send this document request to 1 client? The service will e-mail each one.');
    expect(progress.map((p) => p.message)).toContain('Sending to 1 client');
    expect(lines(r)[0]).toMatch(
      /^NOT SENT: 0 sent, 0 may have been sent, 1 not sent, 1 skipped \(of 2\)\. STOPPED by the firm's plan limit \(at recipient 1\): /,
    );
    expect(r.isError).toBe(true);
  });
});
