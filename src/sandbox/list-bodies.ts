import { createHash } from 'node:crypto';
import type { Answer, ListBody, ListName } from './answer.js';
import { listedRecord, type ResolvedDialect } from './dialect.js';
import type { SandboxFirm } from './seed.js';

/** The sandbox's list answers: each list serialized once per change, with its validators, and paged as the dialect pages. */
export class ListBodies {
  /** Serialized lists per firm, by list and page: `requests`, `requests 2`. */
  private readonly bodies = new WeakMap<SandboxFirm, Map<string, ListBody>>();

  constructor(
    private readonly dialect: ResolvedDialect,
    private readonly baseUrl: () => string,
  ) {}

  /** Marks these lists of a firm stale: the next answer serializes them again. */
  markStale(firm: SandboxFirm, ...lists: ListName[]): void {
    for (const [key, list] of this.bodies.get(firm) ?? []) if (lists.includes(key.split(' ')[0] as ListName)) list.stale = true;
  }

  /**
   * Lists are serialized once per change: large seeded firms answer at the speed of the socket. The
   * validators and the compressed bodies are computed once per serialized body too.
   */
  answer(firm: SandboxFirm, what: ListName, page: number, indexes: readonly number[], now: number): Answer {
    const cache = this.bodies.get(firm) ?? new Map<string, ListBody>();
    this.bodies.set(firm, cache);
    const key = page === 1 ? what : `${what} ${page}`;
    const hidden = indexes.join(',');
    let list = cache.get(key);
    if (!list || list.stale || list.hidden !== hidden) {
      const skip = new Set(indexes);
      const shown = skip.size === 0 ? firm.requests : firm.requests.filter((_, i) => !skip.has(i));
      const records = what === 'clients' ? firm.clients : shown.map((r) => listedRecord(r, this.dialect));
      const { value, headers } = this.paged(records, what, page);
      const text = JSON.stringify(value);
      const etag = `"${createHash('sha1').update(text).digest('base64url')}"`;
      if (list && list.etag === etag) {
        list = { ...list, hidden, stale: false };
      } else {
        const modifiedSec = Math.max(Math.floor(now / 1000), list ? list.modifiedSec + 1 : 0);
        list = { text, etag, modifiedSec, hidden, stale: false, encoded: {}, headers };
      }
      cache.set(key, list);
    }
    return { status: 200, body: list.text, list, headers: list.headers };
  }

  /** A list answer's body: every record (ours), or one page of them with the dialect's signal of the rest. */
  private paged(records: unknown[], what: ListName, page: number): { value: Record<string, unknown>; headers?: Record<string, string> } {
    const paging = this.dialect.paging;
    if (!paging) return { value: { data: records } };
    const start = (page - 1) * paging.pageSize;
    const data = records.slice(start, start + paging.pageSize);
    const more = start + paging.pageSize < records.length;
    const next = `${this.baseUrl()}/api/v1/${what}?page=${page + 1}`;
    switch (paging.signal) {
      case 'next':
        return { value: { data, next: more ? next : null } };
      case 'has_more':
        return { value: { data, has_more: more } };
      case 'link':
        return { value: { data }, headers: more ? { link: `<${next}>; rel="next"` } : undefined };
      case 'total':
        return { value: { data, total: records.length } };
    }
  }
}
