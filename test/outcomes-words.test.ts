import { describe, expect, it } from 'vitest';
import {
  answeredTooLate,
  cancelledAfterWrite,
  CHECK_FIRST,
  inProgressReason,
  ledgerReason,
  mayHaveBeenSent,
  outcomeNotRecorded,
  tokenJustUsed,
  unexpectedFailure,
} from '../src/send/outcomes.js';
import { namespaceOf, StoreUnavailableError } from '../src/store/store.js';

/**
 * Each outcome of a send worded once (src/send/outcomes.ts), exactly: what a person reads when a send
 * is held, recorded, unclear, late, repeated or cancelled. The whole sentence is checked, so a lost
 * time, id, title or "may have been sent" shows.
 */
const AT = Date.UTC(2026, 2, 16, 9, 5, 42);

describe('the words of each outcome', () => {
  it('a send in progress elsewhere: with and without the minute it started, to whom', () => {
    expect(inProgressReason('Tax "2025"')).toBe(
      'a send of "Tax \\"2025\\"" to this client is already in progress (started by another call, in this or another process sharing the send store), so it may have been sent. ' +
        'Check with list_requests in a minute: if that call\'s server stopped mid-send, this hold clears within about a minute, and the send\'s record then answers "may have been sent" for 24 hours',
    );
    expect(inProgressReason('T', 'Acme', AT)).toMatch(/^a send of "T" to Acme is already in progress \(started at 2026-03-16 09:05 UTC by another call, /);
  });

  it("this server's record: sent (with and without a request id), pending with its claim held, pending without, unclear", () => {
    const base = { at: AT, title: 'Year end', requestId: null };
    expect(ledgerReason({ ...base, outcome: 'sent', requestId: 'req_1' })).toBe(
      'this server sent "Year end" to this client at 2026-03-16 09:05 UTC (request id req_1)',
    );
    expect(ledgerReason({ ...base, outcome: 'sent' })).toBe('this server sent "Year end" to this client at 2026-03-16 09:05 UTC');
    expect(ledgerReason({ ...base, outcome: 'pending' }, true)).toBe(inProgressReason('Year end', 'this client', AT));
    expect(ledgerReason({ ...base, outcome: 'pending' })).toBe(
      'this server may have sent "Year end" to this client: a send started at 2026-03-16 09:05 UTC and its outcome was never recorded (the server stopped mid-send), so it may have been sent; check with list_requests',
    );
    expect(ledgerReason({ ...base, outcome: 'pending' }, false)).toBe(ledgerReason({ ...base, outcome: 'pending' }));
    expect(ledgerReason({ ...base, outcome: 'may_have_been_sent' }, true)).toBe(
      'this server may have sent "Year end" to this client at 2026-03-16 09:05 UTC (the outcome was unclear: it may have been sent); check with list_requests',
    );
  });

  it('unclear, unexpected, too late, a token just used', () => {
    expect(mayHaveBeenSent('The service did not answer.')).toBe(`The service did not answer. The request may have been sent: ${CHECK_FIRST}`);
    expect(CHECK_FIRST).toBe('check with list_requests before sending again');
    expect(unexpectedFailure('boom\nline')).toBe('sending failed unexpectedly (boom line); check with list_requests');
    expect(answeredTooLate(60_000, 'create_request')).toBe(
      "Nothing was sent: the person did not answer within the call's time limit (DOCREQ_TIMEOUT_MS, 60 s), and an answer given after it sends nothing. " +
        'Call create_request again to ask them again (whoever runs the server can give more time with DOCREQ_TIMEOUT_MS).',
    );
    expect(tokenJustUsed('sent')).toBe('Not sent again: this confirmationToken was just used (outcome: sent). Nothing more was sent.');
  });

  it('a send cancelled after it was written, and an outcome the store could not record', () => {
    expect(cancelledAfterWrite('Year end', 'cl_1', 'sent', 'req_9')).toBe(
      'a send the host cancelled after it was written was sent (request id req_9): "Year end" to client cl_1',
    );
    expect(cancelledAfterWrite('Year end', 'cl_1', 'sent', null)).toBe('a send the host cancelled after it was written was sent: "Year end" to client cl_1');
    expect(cancelledAfterWrite('Year end', 'cl_1', 'may_have_been_sent', 'req_9')).toBe(
      `a send the host cancelled after it was written may have been sent (no clear answer came): ${CHECK_FIRST}: "Year end" to client cl_1`,
    );
    expect(outcomeNotRecorded('cl_1', 'disk full')).toBe(
      'send store: the outcome of a send to client cl_1 could not be recorded (disk full); its pre-send record stays, so it is treated as "may have been sent" for 24 hours',
    );
  });
});

describe('the store interface', () => {
  it('a key names its namespace before the first colon; a key without one (or starting with one) goes to "_"', () => {
    expect(namespaceOf('firm1:send:abc')).toBe('firm1');
    expect(namespaceOf('plain')).toBe('_');
    expect(namespaceOf(':odd')).toBe('_');
    expect(namespaceOf('a:')).toBe('a');
  });

  it('an unusable store refuses the send in words that say nothing was sent, under its own name', () => {
    const error = new StoreUnavailableError('redis at 127.0.0.1:6379/0', 'ECONNREFUSED');
    expect(error.name).toBe('StoreUnavailableError');
    expect(error.message).toBe(
      'Nothing was sent: the send store (redis at 127.0.0.1:6379/0) cannot be used (ECONNREFUSED), so this server cannot guarantee the request is sent only once. Sending works again once it is back; reading is not affected.',
    );
  });
});
