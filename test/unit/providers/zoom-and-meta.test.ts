import { createHash } from 'node:crypto';
import { meta } from '../../../src/providers/meta';
import { zoom } from '../../../src/providers/zoom';
import { accepted, check, refusedWith, tampered } from './support';

// Zoom documents the scheme (developers.zoom.us/docs/api/webhooks/#verify-webhook-events; sample zoom/webhook-sample)
// but publishes no fixed vector. Computed outside Node:
//   printf '%s' "v0:1700000000:$BODY" | openssl dgst -sha256 -hmac zoom-secret-token
const ZOOM_SECRET = 'zoom-secret-token';
const ZOOM_BODY = '{"event":"meeting.started","event_ts":1700000000123,"payload":{"account_id":"AcCt1","object":{"uuid":"4444AAAiAAAAAiAiAiiAii==","id":"6962400003","topic":"My Meeting"}}}';
const ZOOM_SIGNATURE = 'v0=d65682ca2fd6e734de8a17312b99da1af9cade73827b9fa4861eda18671ac077';
const zoomHeaders = { 'x-zm-signature': ZOOM_SIGNATURE, 'x-zm-request-timestamp': '1700000000' };

describe('zoom preset', () => {
  it('accepts the vector, refuses one changed byte and a timestamp outside the tolerance', () => {
    expect(check(zoom, { raw: ZOOM_BODY, headers: zoomHeaders, secrets: [ZOOM_SECRET], now: 1700000000 })).toMatchObject(accepted);
    expect(check(zoom, { raw: tampered(ZOOM_BODY), headers: zoomHeaders, secrets: [ZOOM_SECRET], now: 1700000000 })).toEqual(refusedWith('signature_invalid'));
    expect(check(zoom, { raw: ZOOM_BODY, headers: zoomHeaders, secrets: [ZOOM_SECRET], now: 1700000000 - 301 })).toEqual(refusedWith('timestamp_out_of_tolerance'));
  });

  it('trap: verifies the raw bytes, not JSON.stringify of the parsed body (what the official sample does)', () => {
    const spaced = ZOOM_BODY.replace('"event":', '"event": ');
    expect(check(zoom, { raw: spaced, headers: zoomHeaders, secrets: [ZOOM_SECRET], now: 1700000000 })).toEqual(refusedWith('signature_invalid'));
  });

  it('answers endpoint.url_validation with the HMAC of the secret that verified the request', () => {
    const answer = zoom.handshake?.answer({ query: {}, body: { event: 'endpoint.url_validation', payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' } }, secret: ZOOM_SECRET, options: {} });
    // printf %s qgg8vlvZRS6UYooatFL8Aw | openssl dgst -sha256 -hmac zoom-secret-token
    expect(answer).toMatchObject({ status: 200, body: JSON.stringify({ plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken: 'd9e0d764a78494688ba3f2d5c0ed4ca311394b4834d959759213424d2df961e3' }) });
  });

  it('reads the kind from event and synthesizes a delivery id (Zoom sends none)', () => {
    const body = JSON.parse(ZOOM_BODY);
    expect(zoom.kind({}, body)).toBe('meeting.started');
    expect(zoom.deliveryId({}, body)).toBe('meeting.started:1700000000123:4444AAAiAAAAAiAiAiiAii==');
  });
});

// Meta documents the scheme (developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads)
// without a fixed vector; the body keeps Meta's \u00e9 and \/ escapes. Computed outside Node:
//   printf '%s' "$BODY" | openssl dgst -sha256 -hmac meta-app-secret
const META_SECRET = 'meta-app-secret';
const META_BODY = String.raw`{"object":"page","entry":[{"id":"1234","time":1700000000,"messaging":[{"sender":{"id":"42"},"recipient":{"id":"1234"},"timestamp":1700000000000,"message":{"mid":"m_abc","text":"Caf\u00e9 \/menu"}}]}]}`;
const META_SIGNATURE = 'sha256=d541eb388550fb0b48e7131eb70dc8b16f1e9f3873b403e8cfc8b49d968a40f9';

describe('meta preset', () => {
  it('accepts the vector on the raw escaped bytes, refuses the re-serialised body and one changed byte', () => {
    const headers = { 'x-hub-signature-256': META_SIGNATURE };
    expect(check(meta, { raw: META_BODY, headers, secrets: [META_SECRET] })).toMatchObject(accepted);
    expect(check(meta, { raw: JSON.stringify(JSON.parse(META_BODY)), headers, secrets: [META_SECRET] })).toEqual(refusedWith('signature_invalid'));
    expect(check(meta, { raw: tampered(META_BODY), headers, secrets: [META_SECRET] })).toEqual(refusedWith('signature_invalid'));
  });

  it('answers the GET handshake only with the right verify token', () => {
    const options = { verifyTokenHash: createHash('sha256').update('vt').digest('hex') };
    const query = { 'hub.mode': 'subscribe', 'hub.verify_token': 'vt', 'hub.challenge': '1158201444' };
    expect(meta.handshake?.answer({ query, body: undefined, secret: META_SECRET, options })).toMatchObject({ status: 200, body: '1158201444' });
    expect(meta.handshake?.answer({ query: { ...query, 'hub.verify_token': 'no' }, body: undefined, secret: META_SECRET, options })).toBe('forbidden');
    expect(meta.handshake?.answer({ query, body: undefined, secret: META_SECRET, options: {} })).toBe('forbidden');
    expect(meta.handshake?.answer({ query: {}, body: undefined, secret: META_SECRET, options })).toBeUndefined();
  });

  it('reads object.field kinds and synthesizes a delivery id from the entries', () => {
    expect(meta.kind({}, JSON.parse(META_BODY))).toBe('page.messages');
    const wa = (value: object) => ({ object: 'whatsapp_business_account', entry: [{ id: 'w', changes: [{ field: 'messages', value }] }] });
    expect(meta.kind({}, wa({ messages: [{ id: 'wamid.1' }] }))).toBe('whatsapp_business_account.messages');
    expect(meta.kind({}, wa({ statuses: [{ id: 'wamid.1', status: 'read' }] }))).toBe('whatsapp_business_account.statuses');
    // One WhatsApp message or status: its id, as the WhatsApp channel dedupes it (contract §10).
    expect(meta.deliveryId({}, wa({ messages: [{ id: 'wamid.1' }] }))).toBe('wamid.1');
    expect(meta.deliveryId({}, wa({ statuses: [{ id: 'wamid.1', status: 'read' }] }))).toBe('wamid.1:read');
    // Several: one id synthesized from them all.
    const first = meta.deliveryId({}, wa({ messages: [{ id: 'wamid.1' }, { id: 'wamid.2' }] }));
    expect(first).toMatch(/^meta:[0-9a-f]{64}$/);
    expect(meta.deliveryId({}, wa({ messages: [{ id: 'wamid.1' }, { id: 'wamid.2' }] }))).toBe(first);
    expect(meta.deliveryId({}, wa({ messages: [{ id: 'wamid.1' }, { id: 'wamid.3' }] }))).not.toBe(first);
  });
});
