import { describe, expect, it } from 'vitest';
import { FormCheck } from '../src/mcp/form-check.js';
import { sandbox } from './support/sandbox.js';
import { connect } from './support/connect.js';

/**
 * The check of an accepted elicitation answer (src/mcp/form-check.ts), which stands in for the SDK's
 * Ajv in the build: each field kind MCP lets a form ask, and an answer that breaks the form → nothing sent.
 */
const check = (schema: Record<string, unknown>, input: unknown) => new FormCheck().getValidator({ type: 'object', ...schema })(input);
const problem = (schema: Record<string, unknown>, input: unknown) => {
  const r = check(schema, input);
  return r.valid ? undefined : r.errorMessage;
};

describe('FormCheck: the fields a form may ask for', () => {
  it('the send confirmation: a boolean, required', () => {
    const form = { properties: { confirm: { type: 'boolean' } }, required: ['confirm'] };
    expect(check(form, { confirm: true })).toEqual({ valid: true, data: { confirm: true }, errorMessage: undefined });
    expect(check(form, { confirm: false }).valid).toBe(true);
    expect(problem(form, { confirm: 'yes' })).toBe('confirm is not true or false');
    expect(problem(form, {})).toBe('confirm is missing');
    expect(problem(form, null)).toBe('the answer is not an object');
    expect(problem(form, [true])).toBe('the answer is not an object');
    expect(problem(form, 'true')).toBe('the answer is not an object');
    expect(check(form, { confirm: true, note: 'x' }).valid).toBe(true);
    expect(problem({ ...form, additionalProperties: false }, { confirm: true, note: 'x' })).toBe('note was not asked for');
    expect(problem({ properties: {}, required: ['constructor'] }, {})).toBe('constructor is missing');
  });

  it('text: type, choices (enum, or titled oneOf/anyOf), length in characters', () => {
    const form = { properties: { name: { type: 'string', minLength: 2, maxLength: 3 } } };
    expect(problem(form, { name: 5 })).toBe('name is not text');
    expect(problem(form, { name: 'a' })).toBe('name is shorter than 2 characters');
    expect(problem(form, { name: 'abcd' })).toBe('name is longer than 3 characters');
    expect(check(form, { name: 'ab' }).valid).toBe(true);
    expect(check(form, { name: '😀😀😀' }).valid).toBe(true);
    expect(check(form, { name: 'abc' }).valid).toBe(true);
    expect(problem({ properties: { c: { type: 'string', enum: ['a', 'b'] } } }, { c: 'z' })).toBe('c is not one of the choices');
    expect(check({ properties: { c: { type: 'string', enum: ['a', 'b'] } } }, { c: 'b' }).valid).toBe(true);
    const titled = {
      properties: {
        c: {
          type: 'string',
          oneOf: [
            { const: 'a', title: 'A' },
            { const: 'b', title: 'B' },
          ],
        },
      },
    };
    expect(problem(titled, { c: 'z' })).toBe('c is not one of the choices');
    expect(check(titled, { c: 'a' }).valid).toBe(true);
    const any = { properties: { c: { type: 'string', anyOf: [{ const: 'a' }] } } };
    expect(problem(any, { c: 'b' })).toBe('c is not one of the choices');
  });

  it('numbers: finite, whole for integer, within minimum and maximum', () => {
    const form = { properties: { n: { type: 'number', minimum: 1, maximum: 5 } } };
    expect(problem(form, { n: '3' })).toBe('n is not a number');
    expect(problem(form, { n: Number.NaN })).toBe('n is not a number');
    expect(problem(form, { n: 0 })).toBe('n is less than 1');
    expect(problem(form, { n: 6 })).toBe('n is more than 5');
    expect(check(form, { n: 1 }).valid).toBe(true);
    expect(check(form, { n: 5 }).valid).toBe(true);
    expect(check(form, { n: 2.5 }).valid).toBe(true);
    expect(problem({ properties: { n: { type: 'integer' } } }, { n: 2.5 })).toBe('n is not a whole number');
    expect(check({ properties: { n: { type: 'integer' } } }, { n: 2 }).valid).toBe(true);
  });

  it('several choices: a list of allowed values, within minItems and maxItems', () => {
    const form = { properties: { m: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 2 } } };
    expect(problem(form, { m: 'a' })).toBe('m is not a list');
    expect(problem(form, { m: ['a', 'z'] })).toBe('m holds a value that is not one of the choices');
    expect(problem(form, { m: [] })).toBe('m has fewer than 1 choices');
    expect(problem(form, { m: ['a', 'b', 'c'] })).toBe('m has more than 2 choices');
    expect(check(form, { m: ['a'] }).valid).toBe(true);
    expect(check(form, { m: ['a', 'c'] }).valid).toBe(true);
    expect(check({ properties: { m: { type: 'array', items: { anyOf: [{ const: 'x' }] } } } }, { m: ['x'] }).valid).toBe(true);
    expect(problem({ properties: { m: { type: 'array', items: { type: 'string' } } } }, { m: ['x'] })).toBe('m is a list the form cannot check');
  });

  it('anything else is refused, never passed: a form that is not an object, a field of another kind', () => {
    expect(new FormCheck().getValidator({ type: 'string' })({}).valid).toBe(false);
    expect(problem({ properties: { o: { type: 'object' } } }, { o: {} })).toBe('o is of a kind a form cannot ask for');
    expect(problem({ properties: { o: { type: 'null' } } }, { o: null })).toBe('o is of a kind a form cannot ask for');
  });
});

const sb = await sandbox();

describe('an accepted confirmation that breaks the form', () => {
  it('is refused by the server (2025-11-25, where the server asks): nothing is sent, and the person is told to confirm in the chat', async () => {
    const client = sb.demoFirm.clients[0]!;
    const mcp = await connect(sb, { era: '2025-11-25', elicit: () => ({ action: 'accept', content: { confirm: 'yes' } }) as never });
    const result = await mcp.call('create_request', { client: client.id, title: 'Form check', items: [{ name: 'W-2' }] });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Nothing was sent: asking the person to confirm failed \(.*confirm is not true or false/);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
    await mcp.close();
  });
});

describe('the confirmation a person is asked', () => {
  it.each(['2025-11-25', '2026-07-28'] as const)('(%s) is one required yes-or-no, titled "Send it" and saying what yes does', async (era) => {
    const forms: unknown[] = [];
    const mcp = await connect(sb, {
      era,
      elicit: (_message, form) => {
        forms.push(form?.requestedSchema);
        return { action: 'decline' } as never;
      },
    });
    const result = await mcp.call('create_request', { client: sb.demoFirm.clients[0]!.id, title: 'Form shape', items: [{ name: 'W-2' }] });
    expect(result.text).toMatch(/^NOT SENT: the person declined/);
    expect(forms).toEqual([
      {
        type: 'object',
        properties: { confirm: { type: 'boolean', title: 'Send it', description: 'Yes: send the request and e-mail the client.' } },
        required: ['confirm'],
      },
    ]);
    await mcp.close();
  });
});
