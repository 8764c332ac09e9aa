import type { ToolDefinition } from './define.js';
import { createRequest } from './create-request.js';
import { createRequestBatch } from './create-request-batch.js';
import { listClients } from './list-clients.js';
import { listRequests } from './list-requests.js';
import { listTemplates } from './list-templates.js';

// Reads first, then the send: hosts list tools in this order, and a model that meets list_clients
// first finds the ids create_request needs. Read-only mode hides every tool whose readOnlyHint is false.
export const TOOLS: ToolDefinition[] = [listClients, listRequests, createRequest, createRequestBatch, listTemplates];

export const INSTRUCTIONS = `docreq-mcp works with the firm's Document Request Service.
- list_clients finds clients (search by name or e-mail) and gives their ids.
- list_requests answers questions about requests: exact counts, overdue, due soon, by status, per client.
- list_templates gives the firm's checklist templates (built-in and the firm's own) and, by name, their items for create_request.
- create_request SENDS an e-mail to a real client. Always: find the client's id, call create_request with dryRun: true, show the person the preview, and send (dryRun: false) only after they agree. Never retry a failed send without checking list_requests.
- create_request_batch sends the same request to 2–100 clients with one preview and one confirmation; it stops at a plan limit, and called again sends only to the clients not yet sent.
Counts in every result are exact over all records; lists are paged (limit/offset, nextOffset).`;
