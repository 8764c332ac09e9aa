// The protocol revision this run's client speaks (one vitest project per era, vitest.config.ts).

/**
 * The protocol revision the suite's client speaks: 2025-11-25 (the SDK v1 Client, initialize, linked
 * in memory) or 2026-07-28 (the SDK v2 Client pinned to the modern era, no initialize, each request
 * served by the SDK v2 HTTP entry in process). vitest.config.ts runs the behaviour files once per era.
 */
export const ERA: '2025-11-25' | '2026-07-28' = process.env.DOCREQ_TEST_ERA === '2026-07-28' ? '2026-07-28' : '2025-11-25';
