import { compileGlob } from './event-filter';
import standardWebhooksKinds from './kinds/standard-webhooks.json';
import githubKinds from './kinds/github.json';
import stripeKinds from './kinds/stripe.json';
import slackKinds from './kinds/slack.json';
import shopifyKinds from './kinds/shopify.json';
import twilioKinds from './kinds/twilio.json';
import telegramKinds from './kinds/telegram.json';
import gitlabKinds from './kinds/gitlab.json';
import linearKinds from './kinds/linear.json';
import zoomKinds from './kinds/zoom.json';
import metaKinds from './kinds/meta.json';
import intercomKinds from './kinds/intercom.json';
import pagerdutyKinds from './kinds/pagerduty.json';
import sentryKinds from './kinds/sentry.json';
import dropboxKinds from './kinds/dropbox.json';
import xKinds from './kinds/x.json';
import microsoftGraphKinds from './kinds/microsoft-graph.json';
import hmacKinds from './kinds/hmac.json';
import type { Provider } from './provider';
import { PROVIDERS } from './registry';

/**
 * What each provider documents as its event kinds, shipped as data (`kinds/<name>.json`, each
 * with the pages or SDK files it was taken from). `open`: the sender defines its own kinds
 * (Standard Webhooks, generic HMAC), so any glob is accepted. `openPrefixes`: kinds under
 * these prefixes are user-defined (Slack's `command./deploy`).
 */
export interface KindsFile {
  note?: string;
  extracted?: string;
  provider: string;
  sources: string[];
  open?: boolean;
  openPrefixes?: string[];
  kinds: string[];
}

const FILES: readonly KindsFile[] = [
  standardWebhooksKinds,
  githubKinds,
  stripeKinds,
  slackKinds,
  shopifyKinds,
  twilioKinds,
  telegramKinds,
  gitlabKinds,
  linearKinds,
  zoomKinds,
  metaKinds,
  intercomKinds,
  pagerdutyKinds,
  sentryKinds,
  dropboxKinds,
  xKinds,
  microsoftGraphKinds,
  hmacKinds,
];

const BY_PROVIDER = new Map(FILES.map((file) => [file.provider, file]));

export function kindsOf(name: string): KindsFile {
  return BY_PROVIDER.get(name) ?? { provider: name, sources: [], open: true, kinds: [] };
}

const KNOWN = new Map(FILES.map((file) => [file.provider, new Set(file.kinds)]));

/**
 * Whether the catalogue lists this kind for the provider (contract §10): a documented kind, a
 * kind under one of its user-defined prefixes, or any kind of a sender that defines its own.
 */
export function isKnownKind(name: string, kind: string): boolean {
  const file = kindsOf(name);
  if (file.open) return true;
  if (KNOWN.get(name)?.has(kind)) return true;
  return file.openPrefixes?.some((prefix) => kind.startsWith(prefix)) ?? false;
}

/** One row of GET /admin/providers. */
export function catalogueEntry(provider: Provider) {
  const file = kindsOf(provider.name);
  return {
    name: provider.name,
    title: provider.title,
    verifies: provider.verifies,
    handshakes: provider.handshake ? [provider.handshake.describe] : [],
    deliveryId: provider.deliveryIdSource,
    acknowledgement: provider.acknowledgement ?? 'default',
    eventKinds: file.kinds,
    ...(file.open && { eventKindsOpen: true }),
    ...(file.openPrefixes && { openPrefixes: file.openPrefixes }),
    eventKindsSources: file.sources,
  };
}

export function catalogue() {
  return PROVIDERS.map(catalogueEntry);
}

const CLOSEST = 5;

/** The `events` globs that match none of the provider's documented kinds, each with the closest kinds. */
export function unknownGlobs(name: string, globs: readonly string[]): { glob: string; closest: string[] }[] {
  const file = kindsOf(name);
  if (file.open) return [];
  const unknown: { glob: string; closest: string[] }[] = [];
  for (const glob of globs) {
    const pattern = glob.startsWith('!') ? glob.slice(1) : glob;
    if (pattern === '**' || file.openPrefixes?.some((prefix) => pattern.startsWith(prefix))) continue;
    const re = compileGlob(pattern);
    if (file.kinds.some((kind) => re.test(kind))) continue;
    unknown.push({ glob, closest: closestKinds(pattern, file.kinds) });
  }
  return unknown;
}

function closestKinds(pattern: string, kinds: readonly string[]): string[] {
  return kinds
    .map((kind) => ({ kind, distance: editDistance(pattern, kind) }))
    .sort((a, b) => a.distance - b.distance || a.kind.localeCompare(b.kind))
    .slice(0, CLOSEST)
    .map((entry) => entry.kind);
}

/** Levenshtein distance, two rows. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}
