import { catalogue, kindsOf, unknownGlobs } from '../../../src/providers/catalogue';
import { editDistance } from '../../../src/edit-distance';
import { compileGlob, eventFilter, MAX_KIND_LENGTH } from '../../../src/providers/event-filter';
import { PROVIDERS, providerNamed } from '../../../src/providers/registry';

describe('events globs', () => {
  it('"*" is one segment, "**" any number, other characters are literal', () => {
    expect(compileGlob('pull_request.*').test('pull_request.opened')).toBe(true);
    expect(compileGlob('pull_request.*').test('pull_request_review.submitted')).toBe(false);
    expect(compileGlob('customer.*').test('customer.subscription.updated')).toBe(false);
    expect(compileGlob('customer.**').test('customer.subscription.updated')).toBe(true);
    expect(compileGlob('orders/*').test('orders/create')).toBe(true);
    expect(compileGlob('a+b').test('aab')).toBe(false);
  });

  it('includes by any positive glob, excludes by any "!" glob, and includes everything without a positive glob', () => {
    const filter = eventFilter(['pull_request.*', 'push', '!pull_request.labeled']);
    expect(['pull_request.opened', 'push'].map(filter.includes)).toEqual([true, true]);
    expect(['pull_request.labeled', 'issues.opened'].map(filter.includes)).toEqual([false, false]);
    expect(eventFilter(['!ping']).includes('push')).toBe(true);
    expect(eventFilter(['!ping']).includes('ping')).toBe(false);
  });

  it('lists a kind only when a positive glob names it (how a ping is let through)', () => {
    expect(eventFilter(['!push']).lists('ping')).toBe(false);
    expect(eventFilter(['push']).lists('ping')).toBe(false);
    expect(eventFilter(['push', 'ping']).lists('ping')).toBe(true);
    expect(eventFilter(['*', '!ping']).lists('ping')).toBe(false);
    expect(eventFilter(['*']).lists('ping')).toBe(true);
  });

  it('keeps the glob semantics at the edges: "**" crosses dots, "*" does not, runs of stars are one', () => {
    expect(compileGlob('**').test('a.b.c')).toBe(true);
    expect(compileGlob('a.**.z').test('a.b.c.z')).toBe(true);
    expect(compileGlob('a.**.z').test('a.z')).toBe(false);
    expect(compileGlob('a.*.z').test('a.b.c.z')).toBe(false);
    expect(compileGlob('a.*.z').test('a..z')).toBe(true);
    expect(compileGlob('*_created').test('user_created')).toBe(true);
    expect(compileGlob('a.***').test('a.b.c')).toBe(true);
    expect(compileGlob('push').test('push.x')).toBe(false);
  });

  // A backtracking regular expression (`**` as `.*`) needs about 8.9 s for 6 globstars
  // against 100 dots, and far longer here: on such code this test never finishes.
  it('matches nested "**" globs against the longest kind of dots without backtracking', () => {
    const kind = '.'.repeat(MAX_KIND_LENGTH);
    const glob = `a${'.**'.repeat(40)}.z`;
    expect(compileGlob(glob).test(kind)).toBe(false);
    expect(eventFilter([glob]).includes(kind)).toBe(false);
    expect(compileGlob(`${'**.'.repeat(40)}**`).test(kind)).toBe(true);
    expect(compileGlob(`*${'.*'.repeat(MAX_KIND_LENGTH - 1)}`).test('.'.repeat(MAX_KIND_LENGTH))).toBe(false);
  });
});

describe('the catalogue', () => {
  it('has a kinds file, with sources, for every preset', () => {
    for (const provider of PROVIDERS) {
      const file = kindsOf(provider.name);
      expect({ name: provider.name, provider: file.provider }).toEqual({ name: provider.name, provider: provider.name });
      expect(file.sources.length).toBeGreaterThan(0);
      expect(file.open === true || file.kinds.length > 0).toBe(true);
    }
    expect(catalogue().map((entry) => entry.name)).toEqual(PROVIDERS.map((p) => p.name));
  });

  it('finds the globs that match no documented kind, with the closest kinds first', () => {
    expect(unknownGlobs('github', ['push', 'pull_request.*', '!ping'])).toEqual([]);
    const [typo] = unknownGlobs('github', ['pull_requst.opened']);
    expect(typo.glob).toBe('pull_requst.opened');
    expect(typo.closest[0]).toBe('pull_request.opened');
    expect(unknownGlobs('stripe', ['invoice.payed'])[0].closest).toContain('invoice.paid');
  });

  // Deliveries shaped as the sources named in each kinds file show them; the kind the preset reads
  // from each must be one its catalogue lists, or an `events` glob naming it would be refused.
  it.each([
    ['shopify', 'customer.joined_segment', { 'x-shopify-topic': 'customer.joined_segment' }, {}],
    ['shopify', 'customers/redact', { 'x-shopify-topic': 'customers/redact' }, {}],
    ['telegram', 'callback_query', {}, { update_id: 1, callback_query: {} }],
    ['gitlab', 'merge_request.approval', {}, { object_kind: 'merge_request', object_attributes: { action: 'approval' } }],
    ['gitlab', 'release', {}, { object_kind: 'release', action: 'create' }],
    ['zoom', 'meeting.participant_jbh_waiting', {}, { event: 'meeting.participant_jbh_waiting' }],
    ['meta', 'instagram.message_reads', {}, { object: 'instagram', entry: [{ messaging: [{ read: { mid: 'm1' } }] }] }],
    ['meta', 'page.leadgen', {}, { object: 'page', entry: [{ changes: [{ field: 'leadgen', value: {} }] }] }],
    ['meta', 'whatsapp_business_account.statuses', {}, { object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { statuses: [{}] } }] }] }],
    ['intercom', 'contact.lead.tag.created', {}, { topic: 'contact.lead.tag.created' }],
    ['pagerduty', 'pagey.ping', {}, { event: { event_type: 'pagey.ping' } }],
    ['sentry', 'metric_alert.open', { 'sentry-hook-resource': 'metric_alert' }, { action: 'open' }],
    ['dropbox', 'list_folder', {}, { list_folder: { accounts: ['dbid:1'] } }],
    ['x', 'follow_events', {}, { for_user_id: '1', follow_events: [{ type: 'unfollow' }] }],
    ['microsoft-graph', 'lifecycle.reauthorizationRequired', {}, { value: [{ lifecycleEvent: 'reauthorizationRequired' }] }],
    ['twilio', 'message.status.partially_delivered', {}, { MessageSid: 'SM1', MessageStatus: 'partially_delivered' }],
    ['twilio', 'message.inbound', {}, { MessageSid: 'SM1', MessageStatus: 'received' }],
    ['twilio', 'message.status.receiving', {}, { MessageSid: 'SM1', MessageStatus: 'receiving' }],
    ['twilio', 'message.inbound', {}, { SmsMessageSid: 'SM1', SmsStatus: 'received' }],
    ['twilio', 'call.status.initiated', {}, { CallSid: 'CA1', CallStatus: 'initiated' }],
  ])('%s: a documented delivery read as %s is a catalogued kind', (name, expected, headers, body) => {
    const kind = providerNamed(name)!.kind(headers, body);
    expect(kind).toBe(expected);
    expect(kindsOf(name).kinds).toContain(kind);
  });

  it('lists no kind a preset can never read: Twilio "received" is message.inbound, Zoom\'s handshake is not a kind', () => {
    expect(kindsOf('twilio').kinds).not.toContain('message.status.received');
    expect(kindsOf('zoom').kinds).not.toContain('endpoint.url_validation');
    expect(kindsOf('x').kinds).not.toContain('unfollow_events');
  });

  it('accepts any glob for open providers and user-defined prefixes', () => {
    expect(unknownGlobs('standard-webhooks', ['anything.at.all'])).toEqual([]);
    expect(unknownGlobs('slack', ['command./deploy'])).toEqual([]);
  });

  it('measures edit distance', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });
});
