import { z } from 'zod';

/** Pieces of input and output schemas shared by the tools. Inputs avoid transforms so they list cleanly. */

export const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((s) => !Number.isNaN(Date.parse(s)) && new Date(Date.parse(s)).toISOString().startsWith(s), 'is not a real calendar date');

export const offsetField = z.number().int().min(0).max(10_000_000).optional().describe('Records to skip (default 0); the result gives nextOffset for the next page.');

export const limitField = (fallback: number) =>
  z.number().int().min(1).max(500).optional().describe(`Records to return, 1–500 (default ${fallback}). Counts are always over all records.`);

export const pageFields = {
  total: z.number().int().describe('All records the firm has.'),
  matched: z.number().int().describe('Records that pass the filters.'),
  offset: z.number().int(),
  returned: z.number().int(),
  nextOffset: z.number().int().nullable().describe('Offset of the next page, or null when this page is the last.'),
};

export const statusCounts = z.record(z.string(), z.number().int());

export function page<T>(all: T[], offset: number, limit: number) {
  const slice = all.slice(offset, offset + limit);
  const next = offset + slice.length;
  return { slice, nextOffset: next < all.length ? next : null };
}
