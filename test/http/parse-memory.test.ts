/**
 * Issue 9, item 1: parsing expands a body many times over. A 0.99 MB `[{},{},…]` keeps about
 * 21 MB of heap once parsed: the budget counts that expansion, so 32 of them in flight cannot
 * take 700 MB. (Forms stop at MAX_FIELDS: test/integration/form-fields-heap.test.ts.)
 */
import request from 'supertest';
import { jsonParseCost } from '../../src/body/safe-json';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';
import { waitFor } from '../helpers/sockets';

const EMPTY_OBJECTS = `[${Array(330_000).fill('{}').join(',')}]`;
const MiB = 1024 * 1024;

describe('the memory that parsing JSON takes is counted in the body budget (issue 9, item 1)', () => {
  it('charges a 0.99 MB [{},{},…] about 20 MB: another one gets 503 busy while the first is in flight (429 from the same client)', async () => {
    const t = testApp({ MAX_RECORD_BYTES: String(8 * MiB), PUBLISH_TIMEOUT_MS: '20000', TRUST_PROXY: 'loopback' });
    await t.addTrigger('first', triggerInput({ workspaceId: 'ws-a' }));
    await t.addTrigger('second', triggerInput({ workspaceId: 'ws-b' }));
    const post = (path: string, from: string) =>
      request(t.app).post(hookUrl(path)).set('X-Forwarded-For', from).set('Content-Type', 'application/json').send(EMPTY_OBJECTS);
    t.sink.mode = 'hang';
    const first = post('first', '192.0.2.1').then((r) => r);
    await waitFor('the first event at the sink', () => t.sink.writes > 0);
    expect(t.deps.bodyBudget.inUse).toBeGreaterThan(20 * MiB);

    // Another tenant, another client: the process-wide budget has no room for a second.
    const second = await post('second', '192.0.2.2');
    expect(expectError(second, 'SERVICE_UNAVAILABLE').details.reason).toBe('busy');
    expect(second.headers['retry-after']).toBeDefined();
    // The same client: its own share is spent.
    const sentAt = Date.now();
    const again = await post('second', '192.0.2.1');
    const shareSpent = expectError(again, 'RATE_LIMITED').details;
    expect(shareSpent.reason).toBe('body_share_exceeded');
    // Contract §6: every 429 carries both Retry-After (seconds) and details.retryAfter (a time).
    expect(Number(again.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Date.parse(shareSpent.retryAfter)).toBeGreaterThanOrEqual(sentAt + Number(again.headers['retry-after']) * 1000);
    expect(shareSpent.retryAfter).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    t.sink.mode = 'ack';
    t.sink.giveUpHungWrites();
    expect((await first).status).toBe(503);
    expect(t.deps.bodyBudget.inUse).toBe(0);
    expect((await post('second', '192.0.2.2')).status).toBe(200);
    expect(t.deps.bodyBudget.inUse).toBe(0);
  });

  it('answers 413 body_too_complex for JSON whose parse would take more than the whole budget', async () => {
    const t = testApp({ MAX_RECORD_BYTES: String(8 * MiB), MAX_INFLIGHT_BODY_BYTES: String(8 * MiB) });
    await t.addTrigger('any', triggerInput());
    const res = await request(t.app).post(hookUrl('any')).set('Content-Type', 'application/json').send(EMPTY_OBJECTS);
    expect(expectError(res, 'PAYLOAD_TOO_LARGE').details.reason).toBe('body_too_complex');
    expect(t.sink.records).toHaveLength(0);
    expect(t.deps.bodyBudget.inUse).toBe(0);
  });

  it('charges ordinary JSON little beyond its bytes', async () => {
    const t = testApp({ PUBLISH_TIMEOUT_MS: '20000' });
    await t.addTrigger('plain', triggerInput());
    const body = JSON.stringify({ event: 'order.created', items: Array.from({ length: 2000 }, (_, i) => ({ sku: `sku-${i}`, qty: i, note: 'n'.repeat(40) })) });
    t.sink.mode = 'hang';
    const held = request(t.app).post(hookUrl('plain')).set('Content-Type', 'application/json').send(body).then((r) => r);
    await waitFor('the event at the sink', () => t.sink.writes > 0);
    expect(t.deps.bodyBudget.inUse).toBeGreaterThanOrEqual(Buffer.byteLength(body));
    expect(t.deps.bodyBudget.inUse).toBeLessThan(1.5 * Buffer.byteLength(body));
    t.sink.mode = 'ack';
    t.sink.giveUpHungWrites();
    await held;
  });
});

describe('jsonParseCost', () => {
  it('counts containers, keys and values outside strings only', () => {
    expect(jsonParseCost(Buffer.from('[{},{}]'))).toBe(2 * 7 + 64 * 3 + 8 * 1);
    expect(jsonParseCost(Buffer.from('{"a":1,"b":[2]}'))).toBe(2 * 15 + 64 * 2 + 32 * 2 + 8 * 1);
    const inString = Buffer.from('"{[:,\\"{[:,"');
    expect(jsonParseCost(inString)).toBe(2 * inString.length);
  });

  it('ends a string at a quote after an even run of backslashes only', () => {
    const closed = Buffer.from(String.raw`["a\\",{}]`); // the string ends in an escaped backslash: {} is structure
    expect(jsonParseCost(closed)).toBe(2 * closed.length + 64 * 2 + 8 * 1);
    const open = Buffer.from(String.raw`["a\\\"{}"]`); // an escaped backslash, then an escaped quote: {} is text
    expect(jsonParseCost(open)).toBe(2 * open.length + 64 * 1);
  });

  it('counts what a byte-by-byte scan counts, on random texts of quotes, backslashes and structure', () => {
    const reference = (raw: Buffer): number => {
      let containers = 0, keys = 0, values = 0, depth = 0, inString = false;
      for (let i = 0; i < raw.length; i++) {
        const c = raw[i];
        if (inString) {
          if (c === 0x5c) i++;
          else if (c === 0x22) inString = false;
        } else if (c === 0x22) inString = true;
        else if (c === 0x7b || c === 0x5b) {
          containers++;
          if (++depth > 256) return 2 * raw.length;
        } else if (c === 0x7d || c === 0x5d) depth--;
        else if (c === 0x3a) keys++;
        else if (c === 0x2c) values++;
      }
      return 2 * raw.length + 64 * containers + 32 * keys + 8 * values;
    };
    const alphabet = '"\\{}[]:,ax';
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let n = 0; n < 2000; n++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 40) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      expect({ text, cost: jsonParseCost(Buffer.from(text)) }).toEqual({ text, cost: reference(Buffer.from(text)) });
    }
  });

  it('counts only the decoding of text nested too deep to be parsed', () => {
    const deep = Buffer.from(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(jsonParseCost(deep)).toBe(2 * deep.length);
  });

  it('is at least the heap JSON.parse keeps for the expansion the issue measured (21 MB for 0.99 MB)', () => {
    expect(jsonParseCost(Buffer.from(EMPTY_OBJECTS))).toBeGreaterThan(21 * 1_000_000);
  });
});
