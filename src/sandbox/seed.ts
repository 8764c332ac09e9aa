/** Deterministic seed data for the sandbox: realistic firms, clients and requests. */

// The item types and correctness modes are the API document's, kept once in src/domain/checklist.ts;
// test/domain.test.ts writes them out again from the document, as the oracle they are checked against.
import { CORRECTNESS_MODES, type ItemType } from '../domain/checklist.js';
import { BUSINESSES, FIRST, LAST, TEMPLATES, TRUSTS } from './seed-words.js';

interface SandboxClient {
  id: string;
  displayName: string;
  email: string;
  status: string;
  [extra: string]: unknown;
}

export interface SandboxItem {
  name: string;
  required: boolean;
  type: ItemType;
}

export interface SandboxRequest {
  id: string;
  title: string;
  status: string;
  dueDate: string | null;
  createdAt: string;
  clientId: string;
  clientName: string;
  totalItems: number;
  completedItems: number;
  items: SandboxItem[];
  correctnessMode: string;
}

export interface SandboxFirm {
  id: string;
  name: string;
  plan: string;
  activeRequestLimit: number;
  monthlyRequestLimit: number;
  createdThisMonth: number;
  clients: SandboxClient[];
  /** Newest first, as the list endpoint returns them. */
  requests: SandboxRequest[];
}

export interface SeedOptions {
  /** Clients of the demo firm (default 36). */
  clients?: number;
  /** Requests of the demo firm (default 90). */
  requests?: number;
  /** The day data is laid out around (default: now). */
  now?: Date;
  seed?: number;
}

export interface SandboxKeys {
  /** The demo firm's active key. */
  demo: string;
  /** A second firm whose active-request limit is reached. */
  harbor: string;
  /** A third firm whose monthly billing limit is reached. */
  northwind: string;
  /** A revoked key of the demo firm. */
  revoked: string;
}

export const SANDBOX_KEYS: SandboxKeys = {
  demo: 'drk_sandbox_demo_4f9a1c7e2b8d4e6f',
  harbor: 'drk_sandbox_harbor_8c2e5a9d1f3b7a40',
  northwind: 'drk_sandbox_northwind_b71d3e95c0a2f86e',
  revoked: 'drk_sandbox_revoked_0e6b2d8f4a1c9e35',
};

/** mulberry32: small, fast, deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function uuidFrom(rand: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16));
  hex[12] = '4';
  hex[16] = '89ab'[Math.floor(rand() * 4)]!;
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const pick = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

const STATUS_WEIGHTS: [string, number][] = [
  ['sent', 0.34],
  ['in_progress', 0.3],
  ['completed', 0.24],
  ['cancelled', 0.06],
  ['archived', 0.06],
];

const DAY = 86_400_000;
export const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A settled request's status: what a request has come to once its due date is weeks behind it (mostly completed). */
const SETTLED_WEIGHTS: [string, number][] = [
  ['completed', 0.86],
  ['archived', 0.07],
  ['cancelled', 0.05],
  ['in_progress', 0.01],
  ['sent', 0.01],
];

function weighted(rand: () => number, weights = STATUS_WEIGHTS): string {
  let r = rand();
  for (const [status, w] of weights) {
    if ((r -= w) < 0) return status;
  }
  return 'sent';
}

/**
 * How far back a firm's requests go: 120 days for the demo's few, a day per 20 requests beyond that, and at most
 * three years. A large firm (more than 2,400 requests) is a few years of tax seasons, so its requests older than
 * SETTLED_DAYS are mostly closed and its filters select what a real firm's would (a few percent overdue, not half).
 */
const HISTORY_DAYS = 3 * 365;
const LARGE_FIRM = 2_400;
const SETTLED_DAYS = 60;

function slug(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '.')
    .replace(/^\.|\.$/g, '');
}

function makeClients(rand: () => number, count: number, domain: string): SandboxClient[] {
  const clients: SandboxClient[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const kind = i % 7 === 3 ? 'business' : i % 11 === 5 ? 'trust' : 'individual';
    let name = kind === 'business' ? pick(rand, BUSINESSES) : kind === 'trust' ? pick(rand, TRUSTS) : `${pick(rand, FIRST)} ${pick(rand, LAST)}`;
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    if (n > 1) name = kind === 'individual' ? `${name} ${String.fromCharCode(64 + Math.min(n, 26))}.` : `${name} (${n})`;
    const client: SandboxClient = {
      id: uuidFrom(rand),
      displayName: name,
      email: `${slug(name)}${n > 1 ? n : ''}@${kind === 'individual' ? 'mail.example' : domain}`,
      status: i % 13 === 12 ? 'inactive' : i % 17 === 16 ? 'invited' : 'active',
    };
    // Real records carry metadata beyond the documented fields; consumers must ignore it.
    if (i % 3 === 0) client.phone = `+1-555-${String(1000 + i).slice(-4)}`;
    if (i % 4 === 1) client.tags = kind === 'trust' ? ['trust', 'annual'] : ['priority'];
    if (i % 5 === 2) client.metadata = { source: 'import', externalRef: `CRM-${10000 + i}` };
    if (i % 6 === 0) client.notes = kind === 'individual' ? 'Prefers a phone call before deadlines.' : 'Send requests to the finance team.';
    clients.push(client);
  }
  return clients;
}

function makeRequests(rand: () => number, clients: SandboxClient[], count: number, now: number): SandboxRequest[] {
  const requests: SandboxRequest[] = [];
  const spanDays = Math.min(HISTORY_DAYS, Math.max(120, Math.ceil(count / 20)));
  const large = count > LARGE_FIRM;
  for (let i = 0; i < count; i++) {
    const client = clients[Math.floor(rand() * clients.length)]!;
    const template = pick(rand, TEMPLATES);
    const created = now - Math.floor((i / count) * spanDays * DAY) - Math.floor(rand() * 8 * 3_600_000);
    const status = weighted(rand, large && now - created > SETTLED_DAYS * DAY ? SETTLED_WEIGHTS : STATUS_WEIGHTS);
    const items = template.items.map(([name, type, required]) => ({ name, type, required }));
    const total = items.length;
    const completed =
      status === 'completed' ? total : status === 'in_progress' ? 1 + Math.floor(rand() * (total - 1)) : status === 'sent' ? 0 : Math.floor(rand() * total);
    const due = created + (10 + Math.floor(rand() * 40)) * DAY;
    const dueDate = i % 9 === 4 ? null : i % 10 === 7 ? `${isoDay(due)}T17:00:00.000Z` : isoDay(due);
    requests.push({
      id: uuidFrom(rand),
      title: template.title,
      status,
      dueDate,
      createdAt: new Date(created).toISOString(),
      clientId: client.id,
      clientName: client.displayName,
      totalItems: total,
      completedItems: completed,
      items,
      correctnessMode: pick(rand, CORRECTNESS_MODES),
    });
  }
  return requests;
}

const OVERLAPPING: [name: string, email: string, index: number][] = [
  ['Tomasz Haddad', 'tomasz.haddad@mail.example', 13],
  ['Tomasz Haddad B.', 'tomasz.haddad.b2@mail.example', 23],
];
const SHARED_NAME_INDEXES = new Set([9, 10]);
/** The demo firm's well-known clients, which the tests and the demo rely on: kept as they are by every dialect. */
export const KNOWN_NAMES: readonly string[] = ['Sam Taylor', ...OVERLAPPING.map(([name]) => name)];

/** Makes sure the overlapping names exist (the default seed has them already; other sizes get them here). No randomness used. */
function overlappingNames(clients: SandboxClient[]): void {
  if (clients.length <= 24) return;
  const names = new Set(OVERLAPPING.map(([name]) => name));
  const taken = new Set(SHARED_NAME_INDEXES);
  clients.forEach((c, i) => names.has(c.displayName) && taken.add(i));
  for (const [name, email, index] of OVERLAPPING) {
    if (clients.some((c) => c.displayName === name)) continue;
    let i = index;
    while (taken.has(i)) i++;
    taken.add(i);
    clients[i] = { ...clients[i]!, displayName: name, email, status: 'active' };
  }
}

/** Gives each named client at least `min` requests, taken deterministically from clients that have more than `min`. */
function giveRequests(clients: SandboxClient[], requests: SandboxRequest[], names: string[], min: number): void {
  const counts = new Map<string, number>();
  for (const r of requests) counts.set(r.clientId, (counts.get(r.clientId) ?? 0) + 1);
  for (const name of names) {
    const client = clients.find((c) => c.displayName === name);
    if (!client) continue;
    for (const r of requests) {
      if ((counts.get(client.id) ?? 0) >= min) break;
      const from = clients.find((c) => c.id === r.clientId);
      if (!from || names.includes(from.displayName) || from.displayName === 'Sam Taylor' || (counts.get(r.clientId) ?? 0) <= min) continue;
      counts.set(r.clientId, counts.get(r.clientId)! - 1);
      counts.set(client.id, (counts.get(client.id) ?? 0) + 1);
      r.clientId = client.id;
      r.clientName = client.displayName;
    }
  }
}

export function seedFirms(options: SeedOptions = {}): Map<string, SandboxFirm> {
  const rand = prng(options.seed ?? 20261122);
  const now = (options.now ?? new Date()).getTime();
  const demoClients = makeClients(rand, options.clients ?? 36, 'clients.example');
  // Two clients share a display name, so resolving by name must ask which one.
  if (demoClients.length > 10) {
    demoClients[9] = { ...demoClients[9]!, displayName: 'Sam Taylor', email: 'sam.taylor@mail.example' };
    demoClients[10] = { ...demoClients[10]!, displayName: 'Sam Taylor', email: 'samuel.taylor@work.example', status: 'active' };
  }
  // Two different clients whose names overlap ("Tomasz Haddad" is contained in "Tomasz Haddad B."),
  // so a search by the shorter name must prefer the exact match and say so.
  overlappingNames(demoClients);
  const demoRequests = makeRequests(rand, demoClients, options.requests ?? 90, now);
  giveRequests(
    demoClients,
    demoRequests,
    OVERLAPPING.map(([name]) => name),
    2,
  );
  const demo: SandboxFirm = {
    id: 'firm_maple_finch',
    name: 'Maple & Finch Accounting',
    plan: 'Professional',
    activeRequestLimit: 1_000_000,
    monthlyRequestLimit: 500,
    createdThisMonth: 12,
    clients: demoClients,
    requests: demoRequests,
  };
  const harborClients = makeClients(rand, 6, 'harborlegal.example');
  const harborRequests = makeRequests(rand, harborClients, 5, now).map((r) => ({ ...r, status: 'sent', completedItems: 0 }));
  const harbor: SandboxFirm = {
    id: 'firm_harbor_legal',
    name: 'Harbor Legal LLP',
    plan: 'Starter',
    activeRequestLimit: harborRequests.length,
    monthlyRequestLimit: 50,
    createdThisMonth: 5,
    clients: harborClients,
    requests: harborRequests,
  };
  const northwindClients = makeClients(rand, 4, 'northwind.example');
  const northwind: SandboxFirm = {
    id: 'firm_northwind',
    name: 'Northwind Bookkeeping',
    plan: 'Free',
    activeRequestLimit: 25,
    monthlyRequestLimit: 10,
    createdThisMonth: 10,
    clients: northwindClients,
    requests: makeRequests(rand, northwindClients, 3, now),
  };
  return new Map([
    [SANDBOX_KEYS.demo, demo],
    [SANDBOX_KEYS.harbor, harbor],
    [SANDBOX_KEYS.northwind, northwind],
  ]);
}
