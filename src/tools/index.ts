import type { ToolDefinition } from './define.js';
import { createRequest } from './create-request.js';
import { createRequestBatch } from './create-request-batch.js';
import { listClients } from './list-clients.js';
import { listRequests } from './list-requests.js';
import { listTemplates } from './list-templates.js';
import { sendFromPage } from './send-from-page.js';

// Reads first, then the send: hosts list tools in this order, and a model that meets list_clients
// first finds the ids create_request needs. Read-only mode hides every tool whose readOnlyHint is false.
// send_from_page is the preview page's alone (listed with visibility ["app"]: hosts keep it from the model).
export const TOOLS: ToolDefinition[] = [listClients, listRequests, createRequest, createRequestBatch, listTemplates, sendFromPage];

export const INSTRUCTIONS = `docreq-mcp works with the firm's Document Request Service: it lists clients, requests and checklist templates and creates (sends) new requests. Nothing else.
- list_requests answers questions about requests in one call with exact counts (open, closed, overdue with the average days late and the oldest, no due date, open ones due within 7 days, by status, checklist items outstanding) and daysOverdue per request. Filter by state, status, client name, title, overdue, hasDueDate, due or created dates; groupBy: "client" gives per-client rows (sort most_open, most_overdue or most_outstanding, e.g. limit 3 for "the 3 clients with the most open requests").
- list_clients finds clients and their ids (search matches names, e-mails and tags) and shows a client's other fields (phone, tags, notes) when one matches or with details: true; requests: "open" | "none_open" | "overdue" joins them to their requests ("which clients have nothing open?").
- list_templates gives the firm's checklist templates (built-in and the firm's own) and, by name, their items for create_request.
- create_request SENDS an e-mail to a real client. It takes the client's id, e-mail or exact name and resolves it itself (it lists the candidates when a name is ambiguous), so look the client up first only when unsure who is meant. A call that needs confirmation returns a preview: where the host shows the preview page, the person presses Send there (you cannot send it for them); otherwise it gives a confirmationToken: show the person the preview and call again with the token only after they agree. Never retry a failed send without checking list_requests.
- create_request_batch sends the same request to 2–100 clients with one preview and one confirmation; it stops at a plan limit, and called again sends only to the clients not yet sent.
- This server cannot remind a client, change, re-date, cancel or delete a request, change a client's details (phone, e-mail, tags…), or see answers or uploaded files: say so plainly rather than improvising. allowDuplicate sends a NEW request (a new e-mail), not a reminder.
Counts are exact over all records; lists are paged (limit/offset, nextOffset). Requests name their client only by name: notes flag names several clients share.`;
