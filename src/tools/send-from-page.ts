import { z } from 'zod';
import { UserInputError } from '../errors.js';
import { createRequest } from './create-request.js';
import { createRequestBatch } from './create-request-batch.js';
import { defineTool, type ToolDefinition } from './define.js';

/**
 * The preview page's Send (docs/sending.md, "Who presses Send"). On a host that renders MCP Apps the
 * preview's confirmation token goes only to the page (the result's _meta), and this tool, which only the
 * page may call (`_meta.ui.visibility: ["app"]`, src/ui/apps.ts), is how the person's press completes the
 * send: the same send tool, with the same arguments, confirmed by the page's token. A model that calls it
 * anyway (a host that ignores visibility) has no token to give: it never saw one.
 */

const SENDERS: Record<string, ToolDefinition> = { create_request: createRequest, create_request_batch: createRequestBatch };

const SEND_FROM_PAGE = 'send_from_page';

export const sendFromPage = defineTool({
  name: SEND_FROM_PAGE,
  title: 'Page Send',
  description: 'Only the preview page calls this.',
  // Kept short: it is listed to every host, and hosts that show pages keep it from the model.
  inputSchema: z.strictObject({
    tool: z.string().max(40),
    arguments: z.record(z.string(), z.unknown()),
    pageToken: z.string().min(1).max(200),
  }),
  // The send tool's own result (create_request's or create_request_batch's), checked against its schema first.
  outputSchema: z.looseObject({}),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async handler(input, ctx) {
    const sender = Object.hasOwn(SENDERS, input.tool) ? SENDERS[input.tool]! : undefined;
    if (!sender) throw new UserInputError(`Nothing was sent: the page can send only through ${Object.keys(SENDERS).join(' or ')}.`);
    // The page sends the previewed arguments again; a token or dry run among them is not the page's to give.
    const { confirmationToken: _token, dryRun: _dryRun, ...given } = input.arguments;
    const parsed = sender.inputSchema.safeParse({ ...given, confirmationToken: input.pageToken });
    if (!parsed.success)
      throw new UserInputError(
        `Nothing was sent: the page's request does not match ${input.tool}'s arguments (${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}).`,
      );
    const result = await sender.handler(parsed.data, { ...ctx, viaPage: true });
    const mismatch = sender.outputSchema.safeParse(result.structured);
    if (!mismatch.success) throw new Error(`${input.tool}'s result does not match its output schema`);
    return result;
  },
});
