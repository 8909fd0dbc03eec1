import { compileGlob } from './event-filter';
import { KINDS_FILES as FILES } from './kinds-files';
import type { Authenticates, Provider } from './provider';
import { PROVIDERS } from './registry';
import { editDistance } from '../edit-distance';

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

/** The catalogue's keys column (contract §10.1 G): what the trigger holds, whatever its options. */
function keysColumn(provider: Provider): 'secrets' | 'publicKeys' | 'secrets|publicKeys' | 'none' {
  // A recipe trigger holds secrets or publicKeys, as its recipe's algorithm says.
  if (provider.name === 'recipe') return 'secrets|publicKeys';
  if (!provider.keys) return 'secrets';
  const demand = provider.keys({});
  if (demand.secrets && demand.publicKeys) return 'secrets|publicKeys';
  return demand.publicKeys ? 'publicKeys' : demand.secrets ? 'secrets' : 'none';
}

/** What a preset authenticates (contract §10.A 8), as the catalogue lists it and `data.provider` publishes it. */
export function authenticatesOf(provider: Provider): Authenticates {
  return provider.authenticates ?? 'body';
}

/** One row of GET /admin/providers. */
export function catalogueEntry(provider: Provider) {
  const file = kindsOf(provider.name);
  return {
    name: provider.name,
    title: provider.title,
    family: provider.family ?? 'hmac-recipe',
    authenticates: authenticatesOf(provider),
    keys: keysColumn(provider),
    // The allow-listed hosts a delivery may make the gateway fetch keys from (contract §10.1 F); most fetch nothing.
    fetches: [...(provider.fetches ?? [])],
    ...(provider.signedFields && { signedFields: [...provider.signedFields] }),
    ...(provider.recipe !== undefined && { recipe: provider.recipe }),
    verifies: provider.verifies,
    handshakes: provider.handshake ? [provider.handshake.describe] : [],
    deliveryId: provider.deliveryIdSource,
    acknowledgement: acknowledgementColumn(provider),
    eventKinds: file.kinds,
    ...(file.open && { eventKindsOpen: true }),
    ...(file.openPrefixes && { openPrefixes: file.openPrefixes }),
    eventKindsSources: file.sources,
  };
}

function acknowledgementColumn(provider: Provider): string {
  const ack = provider.acknowledgement;
  return (typeof ack === 'function' ? ack({}) : ack) ?? 'default';
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
