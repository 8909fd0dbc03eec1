import { z } from 'zod';
import { Refusal } from '../outcomes/refusal';
import { sha256Hex } from '../security';
import { unknownGlobs } from './catalogue';
import type { KeyDemand, Provider } from './provider';
import { decodePublicKey, fingerprint, privateKeyProblem } from './recipe/public-keys';
import { PROVIDER_NAMES, providerNamed } from './registry';

const DEFAULT_TOLERANCE_SECONDS = 300;
const glob = z.string().min(1).max(200).regex(/^!?[^\s!]+$/, 'a glob: no spaces; "!" only in front');

const keysOf = (provider: Provider, options: Record<string, unknown>): KeyDemand => provider.keys?.(options) ?? { secrets: true };

/** The trigger's `provider` as the admin API and TRIGGERS_FILE accept it (contract §10, §10.1 B). */
export const providerInputSchema = z
  .strictObject({
    name: z.string().refine((name) => providerNamed(name) !== undefined, {
      message: `unknown provider; one of: ${PROVIDER_NAMES.join(', ')}`,
    }),
    secrets: z.array(z.string().min(1).max(1024)).min(1).max(2).optional(),
    publicKeys: z.array(z.string().min(1).max(8192)).min(1).max(2).optional(),
    events: z.array(glob).min(1).max(100).optional(),
    toleranceSeconds: z.number().int().min(1).max(3600).optional(),
    options: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((input, ctx) => {
    const provider = providerNamed(input.name);
    if (!provider) return;
    let options: Record<string, unknown> | undefined;
    if (provider.optionsSchema) {
      const parsed = provider.optionsSchema.safeParse(input.options ?? {});
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          ctx.addIssue({ code: 'custom', message: issue.message, path: ['options', ...issue.path] as (string | number)[] });
        }
      } else options = parsed.data;
    } else if (input.options && Object.keys(input.options).length > 0) {
      ctx.addIssue({ code: 'custom', message: `${provider.name} takes no options`, path: ['options'] });
    } else options = {};
    if (options) checkKeys(provider, options, input, ctx);
    for (const { glob: bad, closest } of unknownGlobs(provider.name, input.events ?? [])) {
      ctx.addIssue({
        code: 'custom',
        message: `"${bad}" matches no documented ${provider.name} event kind; closest: ${closest.join(', ')}`,
        path: ['events', (input.events ?? []).indexOf(bad)],
        params: { reason: 'unknown_event_kind', glob: bad, closest },
      });
    }
  });

/**
 * Contract §10.1 B: shared secrets where the scheme is an HMAC or a token, public keys where it
 * verifies a signature with one (each decoded and checked for its algorithm here, so a wrong
 * key is a 400 naming its index, not a 401 on every delivery), never one for the other.
 */
function checkKeys(provider: Provider, options: Record<string, unknown>, input: { secrets?: string[]; publicKeys?: string[] }, ctx: z.RefinementCtx): void {
  const demand = keysOf(provider, options);
  const issue = (message: string, ...path: (string | number)[]) => ctx.addIssue({ code: 'custom', message, path });
  const keyless = !demand.secrets && !demand.publicKeys;
  if (input.secrets && keyless) issue(`${provider.name} takes no secrets (its sender's keys are pinned in options or fetched)`, 'secrets');
  else if (input.secrets && !demand.secrets) issue(`${provider.name} verifies with publicKeys, not secrets (a public-key algorithm)`, 'secrets');
  if (input.publicKeys && !demand.publicKeys) issue(`${provider.name} verifies with shared secrets; publicKeys are for public-key schemes`, 'publicKeys');
  if (!input.secrets && !input.publicKeys && !keyless && !demand.learnsSecret) {
    if (demand.secrets) issue('1-2 secrets are required', 'secrets');
    else issue('1-2 publicKeys are required', 'publicKeys');
  }
  input.secrets?.forEach((secret, i) => {
    const problem = demand.secrets ? provider.secretProblem?.(secret, options) : undefined;
    if (problem) issue(problem, 'secrets', i);
  });
  const algorithm = demand.publicKeys;
  if (!algorithm) return;
  input.publicKeys?.forEach((key, i) => {
    const decoded = privateKeyProblem(key) ?? decodePublicKey(algorithm, key);
    if (typeof decoded === 'string') issue(decoded, 'publicKeys', i);
  });
}

export type ProviderInput = z.infer<typeof providerInputSchema>;

/**
 * Contract §10.1 C: a scheme that signs `{url}` signs the public URL as the sender called it,
 * which the gateway knows only from PUBLIC_BASE_URL (a Host header is the sender's to choose):
 * refused at PUT while it is unset. Returns the trigger input unchanged.
 */
export function requirePublicUrl<T extends { provider?: ProviderInput }>(input: T, publicBaseUrl: string | undefined): T {
  const provider = input.provider && providerNamed(input.provider.name);
  if (!input.provider || !provider?.signsUrl || publicBaseUrl) return input;
  const options = provider.optionsSchema ? provider.optionsSchema.parse(input.provider.options ?? {}) : {};
  if (!provider.signsUrl(options)) return input;
  const path = input.provider.name === 'recipe' ? 'provider.options.recipe.signedContent' : 'provider.name';
  throw new Refusal('invalid_schema', 'the body does not match the schema', [
    { code: 'custom', path, message: `${input.provider.name} signs the public URL ({url}): set PUBLIC_BASE_URL first` },
  ]);
}

/**
 * A bearer `auth` whose header is one the provider signs in (Authorization for google-pubsub,
 * vonage, okta...) could never pass: refused at PUT naming `auth.header`. Returns the input unchanged.
 */
export function refuseAuthOnSignatureHeader<T extends { provider?: ProviderInput; auth?: { header?: string } }>(input: T): T {
  const provider = input.provider && providerNamed(input.provider.name);
  if (!input.auth || !input.provider || !provider) return input;
  const parsed = provider.optionsSchema ? provider.optionsSchema.safeParse(input.provider.options ?? {}) : { success: true as const, data: {} };
  if (!parsed.success) return input;
  const header = (input.auth.header ?? 'authorization').toLowerCase();
  if (!provider.signatureHeaders(parsed.data as Record<string, unknown>).map((name) => name.toLowerCase()).includes(header)) return input;
  throw new Refusal('invalid_schema', 'the body does not match the schema', [
    { code: 'custom', path: 'auth.header', message: `${provider.name} signs in ${header}: auth needs another header (auth.header)` },
  ]);
}

/** As stored: secrets in plain text (HMAC needs them; the registry encrypts `secrets` at rest), a verify token only as its hash. */
export interface StoredProvider {
  name: string;
  secrets: string[];
  /** Public keys as written (not secret; shown only as fingerprints). */
  publicKeys?: string[];
  events?: string[];
  toleranceSeconds?: number;
  options?: Record<string, unknown>;
}

export function toStoredProvider(input: ProviderInput, now = new Date()): StoredProvider {
  const provider = providerNamed(input.name);
  const parsedOptions = provider?.optionsSchema ? provider.optionsSchema.parse(input.options ?? {}) : undefined;
  let options: Record<string, unknown> | undefined;
  if (parsedOptions) {
    const { verifyToken, ...rest } = parsedOptions;
    options = { ...rest, ...(typeof verifyToken === 'string' && { verifyTokenHash: sha256Hex(verifyToken) }) };
  }
  // A preset that learns its secret in a handshake (Asana) is armed by this PUT: the window runs from now.
  if (provider?.keys?.(options ?? {}).learnsSecret && !input.secrets) options = { ...options, handshakeArmedAt: Math.floor(now.getTime() / 1000) };
  return {
    name: input.name,
    secrets: [...(input.secrets ?? [])],
    ...(input.publicKeys && { publicKeys: [...input.publicKeys] }),
    ...(input.events && { events: [...input.events] }),
    ...(input.toleranceSeconds !== undefined && { toleranceSeconds: input.toleranceSeconds }),
    ...(options && Object.keys(options).length > 0 && { options }),
  };
}

/** A public key's fingerprint, for reads (`sha256:<hex>` of its SPKI DER). */
function publicKeyFingerprint(stored: StoredProvider, key: string): string {
  const provider = providerNamed(stored.name);
  const algorithm = provider && keysOf(provider, stored.options ?? {}).publicKeys;
  const decoded = algorithm ? decodePublicKey(algorithm, key) : 'unknown';
  return typeof decoded === 'string' ? `sha256:${sha256Hex(key)}` : fingerprint(decoded);
}

/** As the admin API shows it: how many secrets are set, public keys as fingerprints, never a secret or a token hash. */
export function publicProvider(stored: StoredProvider) {
  const { verifyTokenHash, handshakeArmedAt: _armed, ...options } = stored.options ?? {};
  const shownOptions = { ...options, ...(verifyTokenHash !== undefined && { verifyTokenSet: true }) };
  return {
    name: stored.name,
    secretsSet: stored.secrets.length,
    ...(stored.publicKeys && { publicKeys: stored.publicKeys.map((key) => publicKeyFingerprint(stored, key)) }),
    ...(stored.events && { events: stored.events }),
    toleranceSeconds: effectiveTolerance(stored),
    ...(Object.keys(shownOptions).length > 0 && { options: shownOptions }),
  };
}

/** The tolerance of the trigger's signed timestamp; 0: not checked (a scheme whose retries keep their first timestamp). */
export function effectiveTolerance(stored: StoredProvider): number {
  if (stored.toleranceSeconds !== undefined) return stored.toleranceSeconds;
  const provider = providerNamed(stored.name);
  return provider?.defaultToleranceFor?.(stored.options ?? {}) ?? provider?.defaultToleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
}
