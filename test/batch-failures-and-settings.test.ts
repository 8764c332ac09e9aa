import { afterEach, describe, expect, it } from 'vitest';
import { AROUND_TODAY, sandbox } from './support/sandbox.js';
import { previewThenSend, serversOn } from './support/connect.js';

/**
 * What create_request_batch says and does when answers are lost and settings decide
 * (src/tools/create-request-batch.ts): answers lost after the service wrote them (the "may have been
 * sent" line, an error result when nothing was surely sent), the log lines for whoever runs the
 * server, a sending setting that cannot be read, confirmation "never", a token bound to its due date
 * and mode, and the question without skips or warnings.
 */
const sb = await sandbox({ ...AROUND_TODAY, clients: 160 });
const firm = sb.demoFirm;
const server = serversOn(sb);
afterEach(() => sb.clearFaults());

type Client = (typeof firm.clients)[number];
const fresh = firm.clients.filter(
  (c) => c.status === 'active' && firm.clients.filter((d) => d.displayName === c.displayName).length === 1 && !firm.requests.some((r) => r.clientId === c.id),
);
let next = 0;
const take = () => fresh[next++]!;
const label = (c: Client) => `"${c.displayName}" <${c.email}> (id ${c.id})`;
let titles = 0;
const title = () => `Batch words two ${++titles}`;
const lines = (r: { text: string }) => r.text.split('\n');
const posts = () => sb.callsTo('POST', '/api/v1/requests');
const logged = (mcp: { logs: string[] }) => mcp.logs.map((l) => l.trimEnd());
const calls = () => sb.callsTo('GET', '/api/v1/clients').length + sb.callsTo('GET', '/api/v1/requests').length + posts().length;
const MAY = 'For "may have been sent": check with list_requests before sending again; this server will not send those again for 24 hours.';

describe('answers lost after the service wrote them', () => {
  it('one lost, one sent: the counts, the "may have been sent" line, not an error; the log has a line per send', async () => {
    const mcp = await server({ env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const [a, b] = [take(), take()];
    sb.inject('POST /api/v1/requests', { kind: 'reset' }, { times: 1, after: true });
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: title(), items: [{ name: 'W-2' }] });
    expect(lines(r)[0]).toBe('SENT: 1 sent, 1 may have been sent, 0 not sent, 0 skipped (of 2).');
    expect(lines(r)[1]).toMatch(
      new RegExp(
        `^ {2}1\\. ${label(a).replace(/[().]/g, '\\$&')}: may have been sent — .+The request may have been sent: check with list_requests before sending again$`,
      ),
    );
    expect(lines(r).at(-1)).toBe(MAY);
    expect(r.isError).toBeFalsy();
    const id = (r.structuredContent as { recipients: { request: { id: string } | null }[] }).recipients[1]!.request!.id;
    expect(logged(mcp)).toContain(`docreq-mcp info: create_request_batch: 1/2 may have been sent: client ${a.id}`);
    expect(logged(mcp)).toContain(`docreq-mcp info: create_request_batch: 2/2 sent: client ${b.id} (request id ${id})`);
  });

  it('every answer lost: NOT SENT, an error result, still with the "may have been sent" line', async () => {
    const mcp = await server({ env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const [a, b] = [take(), take()];
    sb.inject('POST /api/v1/requests', { kind: 'reset' }, { times: 2, after: true });
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: title(), items: [{ name: 'W-2' }] });
    expect(lines(r)[0]).toBe('NOT SENT: 0 sent, 2 may have been sent, 0 not sent, 0 skipped (of 2).');
    expect(lines(r).at(-1)).toBe(MAY);
    expect(r.isError).toBe(true);
  });

  it('a stop at the plan limit is logged for whoever runs the server', async () => {
    const mcp = await server({ env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const { SANDBOX_KEYS } = await import('../src/sandbox/seed.js');
    const limit = firm.activeRequestLimit;
    sb.setActiveRequestRoom(SANDBOX_KEYS.demo, 0);
    try {
      await mcp.call('create_request_batch', { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }] });
    } finally {
      firm.activeRequestLimit = limit;
    }
    expect(logged(mcp)).toContain("docreq-mcp info: create_request_batch: stopped by the firm's plan limit (at recipient 1)");
  });
});

describe('settings', () => {
  it('a safety setting that cannot be read: nothing sent, saying why, before any call', async () => {
    const mcp = await server({ env: { DOCREQ_CONFIRM_SEND: 'sometimes' } });
    const before = calls();
    const r = await mcp.call('create_request_batch', { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }], dryRun: true });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^Nothing was sent: sending is disabled until this is fixed: .*DOCREQ_CONFIRM_SEND/);
    expect(calls()).toBe(before);
  });

  it('DOCREQ_CONFIRM_SEND=never: nobody is asked even when the host can ask, and a dry run needs no token', async () => {
    const questions: string[] = [];
    const mcp = await server({ env: { DOCREQ_CONFIRM_SEND: 'never' }, elicit: (q) => (questions.push(q), { action: 'decline' }) });
    const dry = await mcp.call('create_request_batch', { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }], dryRun: true });
    expect(dry.structuredContent).toMatchObject({ confirmation: { needed: false } });
    const r = await mcp.call('create_request_batch', { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }] });
    expect(questions).toEqual([]);
    expect(r.structuredContent).toMatchObject({ sent: 2 });
  });

  it('without a host that can ask, DOCREQ_CONFIRM_SEND=never still needs no token for a dry run', async () => {
    const mcp = await server({ env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const dry = await mcp.call('create_request_batch', { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }], dryRun: true });
    expect(dry.structuredContent).toMatchObject({ confirmation: { needed: false } });
  });
});

describe('a token is bound to what it previewed', () => {
  it('another due date or another correctness mode: refused, previewed again, nothing sent', async () => {
    const mcp = await server();
    const args = { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }], dueDate: '2026-04-30', correctnessMode: 'soft' };
    const preview = await mcp.call('create_request_batch', args);
    const token = (preview.structuredContent as { confirmation: { token: string } }).confirmation.token;
    const before = posts().length;
    for (const changed of [{ dueDate: '2026-05-01' }, { correctnessMode: 'hard' }]) {
      const r = await mcp.call('create_request_batch', { ...args, ...changed, confirmationToken: token });
      expect(lines(r)[0], JSON.stringify(changed)).toMatch(/^The confirmationToken given does not belong to this exact batch .* PREVIEW — nothing was sent\./);
    }
    expect(posts().length).toBe(before);
    expect((await mcp.call('create_request_batch', { ...args, confirmationToken: token })).structuredContent).toMatchObject({ sent: 2 });
  });
});

describe('the question', () => {
  it('without skips or warnings: who is sent to, then the draft, nothing else', async () => {
    const questions: string[] = [];
    const mcp = await server({ elicit: (q) => (questions.push(q), { action: 'decline' }) });
    const [a, b] = [take(), take()];
    const t = title();
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: t, items: [{ name: 'W-2' }] });
    expect(questions).toEqual([
      [
        'Send this document request to 2 clients? The service will e-mail each one.',
        `- ${label(a)}`,
        `- ${label(b)}`,
        `Title: "${t}"`,
        'Due: no due date',
        "Correctness mode: the service's default",
        'Items: 1 item (1 required):',
        '  1. "W-2" (file, required)',
      ].join('\n'),
    ]);
    expect(lines(r)[0]).toBe(
      'NOT SENT: the person declined the batch; nothing was sent. 0 sent, 0 may have been sent, 0 not sent, 0 skipped, 2 declined (of 2).',
    );
    expect(lines(r)[1]).toBe(`  1. ${label(a)}: declined — the person declined`);
  });

  it('previewThenSend still works with a title of its own', async () => {
    const mcp = await server();
    const { sent } = await previewThenSend(mcp, 'create_request_batch', { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }] });
    expect(sent.structuredContent).toMatchObject({ sent: 2 });
  });
});
