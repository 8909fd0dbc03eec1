import type { Response } from 'supertest';
import type { ErrorCode } from '../../src/outcomes/codes';
import { ERROR_CATALOGUE } from '../../src/outcomes/codes';
import type { TriggerInput } from '../../src/registry/schemas';

/** A token long enough for the admin schema, and easy to grep for in sink records and logs. */
export const TRIGGER_TOKEN = 'tok-SECRET-5f1c9a7e2b';

export const hookUrl = (path: string) => `/api/webhooks/trigger/${path}`;

export function triggerInput(overrides: Partial<TriggerInput> = {}): TriggerInput {
  return { workflowId: 'wf-1', workspaceId: 'ws-1', deployed: true, ...overrides };
}

/**
 * The contract's error body and nothing else: `{ error: { code, message, details? } }`, the
 * status that belongs to the code, an X-Request-Id, and no stack trace or file path.
 */
export function expectError(res: Response, code: ErrorCode): Record<string, any> {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: ERROR_CATALOGUE[code].status, code });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['error']);
  const keys = Object.keys(res.body.error).sort();
  expect(keys.filter((k) => !['code', 'message', 'details'].includes(k))).toEqual([]);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.message.length).toBeGreaterThan(0);
  expect(res.text).not.toMatch(/\bat .+\(.*:\d+:\d+\)|node_modules|\/src\/|\.ts:\d+|\/work\//);
  expect(res.headers['x-request-id']).toBeTruthy();
  return res.body.error;
}

/** X-RateLimit-* as the contract describes them (reset is an ISO 8601 time). */
export function expectRateLimitHeaders(res: Response): { limit: number; remaining: number; reset: Date } {
  const limit = Number(res.headers['x-ratelimit-limit']);
  const remaining = Number(res.headers['x-ratelimit-remaining']);
  const resetHeader = res.headers['x-ratelimit-reset'];
  expect(Number.isInteger(limit) && limit > 0).toBe(true);
  expect(Number.isInteger(remaining) && remaining >= 0).toBe(true);
  expect(resetHeader).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  const reset = new Date(resetHeader);
  expect(reset.toISOString()).toBe(resetHeader);
  return { limit, remaining, reset };
}
