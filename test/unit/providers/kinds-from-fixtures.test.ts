import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import githubExamples from '@octokit/webhooks-examples/api.github.com/index.json';
import { isKnownKind, kindsOf } from '../../../src/providers/catalogue';
import { github } from '../../../src/providers/github';
import { meta } from '../../../src/providers/meta';
import { slack } from '../../../src/providers/slack';
import { telegram } from '../../../src/providers/telegram';
import { twilio } from '../../../src/providers/twilio';

/**
 * Contract §10: the kind each preset derives from a real payload is one its kinds file lists.
 * Payloads: the providers' own examples (@octokit/webhooks-examples) and the captured
 * deliveries of test/fixtures/.
 */

const FIXTURES = join(__dirname, '..', '..', 'fixtures');
const files = (dir: string, ext: string) => readdirSync(join(FIXTURES, dir)).filter((name) => name.endsWith(ext)).sort();
const json = (dir: string, name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, dir, name), 'utf8'));
const form = (name: string) => Object.fromEntries(new URLSearchParams(readFileSync(join(FIXTURES, 'twilio', name), 'utf8')));

describe('GitHub: every example of @octokit/webhooks-examples', () => {
  const cases = githubExamples.flatMap((definition) =>
    definition.examples.map((example, i) => [`${definition.name} #${i}`, definition.name, example as Record<string, unknown>] as const),
  );

  it.each(cases)('%s derives its event.action kind, which the catalogue lists', (_label, event, example) => {
    const action = typeof example.action === 'string' ? example.action : undefined;
    const kind = github.kind({ 'x-github-event': event }, example);
    expect(kind).toBe(action ? `${event}.${action}` : event);
    expect(isKnownKind('github', kind)).toBe(true);
  });

  it('covers most of the catalogue (a kinds file that drifted from GitHub would show here)', () => {
    const derived = new Set(cases.map(([, event, example]) => github.kind({ 'x-github-event': event }, example)));
    const listed = kindsOf('github').kinds;
    expect(listed.filter((kind) => derived.has(kind)).length).toBeGreaterThan(100);
  });
});

describe('Telegram: test/fixtures/telegram', () => {
  it.each(files('telegram', '.json'))('%s derives the update field it carries', (name) => {
    const update = json('telegram', name) as Record<string, unknown>;
    const field = Object.keys(update).find((key) => key !== 'update_id');
    const kind = telegram.kind({}, update);
    expect(kind).toBe(field);
    expect(isKnownKind('telegram', kind)).toBe(true);
  });
});

describe('Meta: test/fixtures/whatsapp', () => {
  it.each(files('whatsapp', '.json'))('%s derives a whatsapp_business_account kind the catalogue lists', (name) => {
    const kind = meta.kind({}, json('whatsapp', name));
    expect(kind).toBe(name.startsWith('status-') ? 'whatsapp_business_account.statuses' : 'whatsapp_business_account.messages');
    expect(isKnownKind('meta', kind)).toBe(true);
  });
});

describe('Twilio: test/fixtures/twilio', () => {
  it.each(files('twilio', '.form'))('%s derives a message kind the catalogue lists', (name) => {
    const fields = form(name);
    const kind = twilio.kind({}, fields);
    expect(kind).toBe(name.startsWith('status-') ? `message.status.${fields.MessageStatus}` : 'message.inbound');
    expect(isKnownKind('twilio', kind)).toBe(true);
  });
});

describe('Slack interactivity', () => {
  it('reads the kind from the signed form, not from the body parser\'s unwrapped payload', () => {
    const payload = { type: 'block_actions', trigger_id: '13345224609.738474920.8088930838d88f008e0' };
    const raw = Buffer.from(`payload=${encodeURIComponent(JSON.stringify(payload))}`);
    const kind = slack.kind({ 'content-type': 'application/x-www-form-urlencoded' }, payload, raw);
    expect(kind).toBe('interactive.block_actions');
    expect(isKnownKind('slack', kind)).toBe(true);
  });
});
