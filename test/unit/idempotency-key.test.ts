import { createHash } from 'node:crypto';
import { Refusal } from '../../src/outcomes/refusal';
import { bodyStoreKey, providerIdempotencyKey, resolveIdempotencyKey, triggerStoreKey } from '../../src/ingest/idempotency-key';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const parts = { method: 'POST', path: 'p', query: {}, contentType: 'application/json', bodyHash: sha256('{"a":1}') };

describe('providerIdempotencyKey (contract §5: verified material only)', () => {
  it("takes the provider's delivery id, marked as the provider's", () => {
    expect(providerIdempotencyKey('evt_1', { id: 'b' }, 'id', parts)).toEqual({ value: 'evt_1', explicit: true, fromProvider: true });
  });

  it('without one, reads keyField from the verified body, else fingerprints: never a header', () => {
    expect(providerIdempotencyKey(undefined, { seq: 7 }, 'seq', parts)).toEqual({ value: '7', explicit: true, fromSender: true });
    expect(providerIdempotencyKey(undefined, { a: 1 }, undefined, parts)).toEqual(resolveIdempotencyKey({}, { a: 1 }, undefined, parts));
  });

  it('keeps body claims in a scope of their own, by kind', () => {
    const trigger = { workspaceId: 'ws', workflowId: 'wf' };
    const key = bodyStoreKey(trigger, 'p', 'orders/create', 'h');
    expect(key).toBe('b:ws:wf:p:orders%2Fcreate:h');
    expect(key).not.toBe(bodyStoreKey(trigger, 'p', 'orders/updated', 'h'));
    expect(triggerStoreKey(trigger, 'p', { value: 'orders%2Fcreate:h', explicit: true }).startsWith('b:')).toBe(false);
  });
});

describe('resolveIdempotencyKey', () => {
  it('takes the Idempotency-Key header first, trimmed', () => {
    expect(resolveIdempotencyKey({ 'idempotency-key': ' k1 ', 'webhook-id': 'w' }, { id: 'b' }, 'id', parts)).toEqual({ value: 'k1', explicit: true, fromSender: true });
  });

  it.each(['webhook-id', 'svix-id', 'x-github-delivery', 'x-shopify-webhook-id', 'x-gitlab-event-uuid'])('never an unsigned delivery id: %s', (name) => {
    expect(resolveIdempotencyKey({ [name]: 'd-1' }, { id: 'b' }, 'id', parts)).toEqual({ value: 'b', explicit: true, fromSender: true });
    expect(resolveIdempotencyKey({ [name]: 'd-1' }, { a: 1 }, undefined, parts).explicit).toBe(false);
  });

  it('uses the first value of a repeated header, and ignores an empty one', () => {
    expect(resolveIdempotencyKey({ 'idempotency-key': ['a', 'b'] }, {}, undefined, parts).value).toBe('a');
    expect(resolveIdempotencyKey({ 'idempotency-key': '  ' }, { id: 'b' }, 'id', parts).value).toBe('b');
  });

  it('then keyField, a dot path to a string or number', () => {
    expect(resolveIdempotencyKey({}, { evt: { id: 'x-1' } }, 'evt.id', parts)).toEqual({ value: 'x-1', explicit: true, fromSender: true });
    expect(resolveIdempotencyKey({}, { seq: 7 }, 'seq', parts)).toEqual({ value: '7', explicit: true, fromSender: true });
  });

  it('falls back to a fingerprint of method, path, query, content type and raw body (through its hash)', () => {
    const expected = sha256(`POST\np\n[]\napplication/json\n${sha256('{"a":1}')}`);
    expect(resolveIdempotencyKey({}, { a: 1 }, undefined, parts)).toEqual({ value: `fp:${expected}`, explicit: false });
    // keyField that is missing, an object, or reached through the prototype chain → fingerprint
    for (const [body, field] of [[{ a: 1 }, 'id'], [{ id: { x: 1 } }, 'id'], [{}, 'constructor.name'], ['text', 'length'], [null, 'a']] as const) {
      expect(resolveIdempotencyKey({}, body, field, parts).explicit).toBe(false);
    }
  });

  it('fingerprints differ by query and method: ?user=1 and ?user=2 with the same empty body are two events', () => {
    const empty = { ...parts, contentType: '', bodyHash: sha256('') };
    const user1 = resolveIdempotencyKey({}, undefined, undefined, { ...empty, query: { user: '1' } }).value;
    const user2 = resolveIdempotencyKey({}, undefined, undefined, { ...empty, query: { user: '2' } }).value;
    expect(user1).not.toBe(user2);
    expect(resolveIdempotencyKey({}, undefined, undefined, empty).value).not.toBe(user1);
    expect(resolveIdempotencyKey({}, undefined, undefined, { ...empty, query: { user: '1' }, method: 'PUT' }).value).not.toBe(user1);
    // a repeated parameter's values are ordered; the parameters themselves are not
    expect(resolveIdempotencyKey({}, undefined, undefined, { ...empty, query: { a: ['1', '2'] } }).value).not.toBe(
      resolveIdempotencyKey({}, undefined, undefined, { ...empty, query: { a: ['2', '1'] } }).value,
    );
    expect(resolveIdempotencyKey({}, undefined, undefined, { ...empty, query: { a: '1', b: '2' } }).value).toBe(
      resolveIdempotencyKey({}, undefined, undefined, { ...empty, query: { b: '2', a: '1' } }).value,
    );
    // a value cannot pose as another parameter
    expect(resolveIdempotencyKey({}, undefined, undefined, { ...empty, query: { a: '1&b=2' } }).value).not.toBe(
      resolveIdempotencyKey({}, undefined, undefined, { ...empty, query: { a: '1', b: '2' } }).value,
    );
  });

  it('fingerprints differ by path, content type and body', () => {
    const base = resolveIdempotencyKey({}, {}, undefined, parts).value;
    expect(resolveIdempotencyKey({}, {}, undefined, { ...parts, path: 'q' }).value).not.toBe(base);
    expect(resolveIdempotencyKey({}, {}, undefined, { ...parts, contentType: 'text/plain' }).value).not.toBe(base);
    expect(resolveIdempotencyKey({}, {}, undefined, { ...parts, bodyHash: sha256('{"a":2}') }).value).not.toBe(base);
    expect(resolveIdempotencyKey({}, {}, undefined, { ...parts }).value).toBe(base);
  });

  it('refuses an explicit key over 255 characters with a 400', () => {
    expect(resolveIdempotencyKey({ 'idempotency-key': 'k'.repeat(255) }, {}, undefined, parts).value).toHaveLength(255);
    let error: unknown;
    try {
      resolveIdempotencyKey({}, { order: { ref: 'k'.repeat(256) } }, 'order.ref', parts);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Refusal);
    expect((error as Refusal).status).toBe(400);
    expect((error as Refusal).message).toContain('from order.ref');
  });
});

describe('triggerStoreKey', () => {
  const key = { value: 'k1', explicit: true };

  it('scopes a key by workspace, workflow and path, so a reused path starts clean', () => {
    const first = triggerStoreKey({ workspaceId: 'ws-1', workflowId: 'wf-1' }, 'orders', key);
    expect(first).toBe('t:ws-1:wf-1:orders:k1');
    expect(triggerStoreKey({ workspaceId: 'ws-1', workflowId: 'wf-2' }, 'orders', key)).not.toBe(first);
    expect(triggerStoreKey({ workspaceId: 'ws-2', workflowId: 'wf-1' }, 'orders', key)).not.toBe(first);
    expect(triggerStoreKey({ workspaceId: 'ws-1', workflowId: 'wf-1' }, 'other', key)).not.toBe(first);
  });

  it("keeps a sender's key apart from the keys the gateway derives (contract §13.1)", () => {
    const trigger = { workspaceId: 'ws-1', workflowId: 'wf-1' };
    const fingerprint = resolveIdempotencyKey({}, { a: 1 }, undefined, parts);
    const posing = resolveIdempotencyKey({ 'idempotency-key': fingerprint.value }, { b: 2 }, undefined, parts);
    expect(posing.value).toBe(fingerprint.value); // published as the sender wrote it
    expect(triggerStoreKey(trigger, 'p', posing)).toBe(`s:ws-1:wf-1:p:${fingerprint.value}`);
    expect(triggerStoreKey(trigger, 'p', fingerprint)).toBe(`t:ws-1:wf-1:p:${fingerprint.value}`);
    // a keyField value too; a provider's delivery id stays where it was
    const field = resolveIdempotencyKey({}, { id: 'evt_1' }, 'id', parts);
    const provider = providerIdempotencyKey('evt_1', {}, undefined, parts);
    expect(triggerStoreKey(trigger, 'p', field)).not.toBe(triggerStoreKey(trigger, 'p', provider));
    expect(triggerStoreKey(trigger, 'p', provider)).toBe('t:ws-1:wf-1:p:evt_1');
  });

  it('cannot be forged by ids that contain the separator', () => {
    expect(triggerStoreKey({ workspaceId: 'a:b', workflowId: 'c' }, 'p', key)).not.toBe(
      triggerStoreKey({ workspaceId: 'a', workflowId: 'b:c' }, 'p', key),
    );
  });
});
