import { describe, expect, it } from 'vitest';
import { connect, sandboxAndClient, structured } from './support/connect.js';

/**
 * Confirmation by multi-round-trip request (2026-07-28): the preview goes back as
 * input_required; the SDK v2 client asks the person and calls again with the answer and the request
 * state. The state is attacker-controlled, so a replayed, altered or foreign one sends nothing.
 */
const { sb, firm } = await sandboxAndClient();
const MODERN = { era: '2026-07-28' as const };
const args = (title: string) => ({ client: firm.clients[3]!.id, title, items: [{ name: 'Payslips' }], dueDate: '2099-02-28' });
const accept = () => ({ action: 'accept' as const, content: { confirm: true } });
const posts = () => sb.callsTo('POST', '/api/v1/requests').length;

/** The retry of a tools/call (the body that carries the request state), as the client sent it. */
function retryRecorder() {
  const retries: string[] = [];
  return { retries, tap: (body: string) => (body.includes('"requestState"') ? (retries.push(body), undefined) : undefined) };
}

describe('MRTR confirmation (2026-07-28 client with elicitation)', () => {
  it('asks the person with the preview and, when they accept, sends once', async () => {
    const asked: string[] = [];
    const rec = retryRecorder();
    const host = await connect(sb, { ...MODERN, tap: rec.tap, elicit: (m) => (asked.push(m), accept()) });
    const result = await host.call('create_request', args('MRTR accepted'));
    await host.close();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('MRTR accepted');
    expect(asked[0]).toContain(firm.clients[3]!.email);
    expect(rec.retries).toHaveLength(1);
    expect(structured<{ sent: boolean; outcome: string }>(result)).toMatchObject({ sent: true, outcome: 'sent' });
    expect(posts()).toBe(1);
  });

  it('sends nothing when the person declines', async () => {
    const host = await connect(sb, { ...MODERN, elicit: () => ({ action: 'decline' }) });
    const result = await host.call('create_request', args('MRTR declined'));
    await host.close();
    expect(structured<{ sent: boolean; outcome: string }>(result)).toMatchObject({ sent: false, outcome: 'declined' });
    expect(result.text).toMatch(/^NOT SENT/);
    expect(posts()).toBe(0);
  });

  it('a replayed request state (the accepted retry posted again) sends nothing more', async () => {
    const rec = retryRecorder();
    const host = await connect(sb, { ...MODERN, tap: rec.tap, elicit: accept });
    await host.call('create_request', { ...args('MRTR replayed'), allowDuplicate: true });
    expect(posts()).toBe(1);
    const again = (await host.post!(rec.retries[0]!)) as { result?: { isError?: boolean; content: { text: string }[] } };
    await host.close();
    expect(again.result?.isError).toBe(true);
    expect(again.result?.content[0]!.text).toContain('already answered once');
    expect(posts()).toBe(1);
  });

  it('an altered request (other arguments, same state) or an altered state sends nothing', async () => {
    const tamperArgs = await connect(sb, {
      ...MODERN,
      elicit: accept,
      tap: (b) => (b.includes('"requestState"') ? b.replace('MRTR altered', 'MRTR swapped') : undefined),
    });
    const swapped = await tamperArgs.call('create_request', args('MRTR altered'));
    await tamperArgs.close();
    expect(swapped.isError).toBe(true);
    expect(swapped.text).toContain('not valid for this call (mismatch)');

    const tamperState = await connect(sb, {
      ...MODERN,
      elicit: accept,
      tap: (b) =>
        b.includes('"requestState"')
          ? b.replace(/("requestState":"dr1\.[0-9a-z]+\.)(.)/, (_, head: string, c: string) => `${head}${c === 'A' ? 'B' : 'A'}`)
          : undefined,
    });
    const forged = await tamperState.call('create_request', args('MRTR forged'));
    await tamperState.close();
    expect(forged.isError).toBe(true);
    expect(forged.text).toContain('Nothing was sent');
    expect(posts()).toBe(0);
  });

  it("another firm's key cannot use the state", async () => {
    const rec = retryRecorder();
    const host = await connect(sb, { ...MODERN, tap: rec.tap, elicit: () => ({ action: 'decline' }) });
    await host.call('create_request', args('MRTR foreign'));
    await host.close();
    const other = await connect(sb, { ...MODERN, key: sb.keys.harbor, elicit: accept });
    const body = rec.retries[0]!.replace('"action":"decline"', '"action":"accept","content":{"confirm":true}');
    await other.call('list_templates', {}); // so the client has sent the headers the replay reuses
    const answer = (await other.post!(body)) as { result?: { isError?: boolean; content: { text: string }[] } };
    await other.close();
    expect(answer.result?.isError).toBe(true);
    expect(answer.result?.content[0]!.text).toContain('Nothing was sent');
    expect(posts()).toBe(0);
  });
});
