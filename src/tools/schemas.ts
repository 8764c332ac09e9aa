import { z } from 'zod';

/** Pieces of input and output schemas shared by the tools. Inputs avoid transforms so they list cleanly. */

export const statusCounts = z.record(z.string(), z.number().int());

export function page<T>(all: T[], offset: number, limit: number) {
  const slice = all.slice(offset, offset + limit);
  const next = offset + slice.length;
  return { slice, nextOffset: next < all.length ? next : null };
}
