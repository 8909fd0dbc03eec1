import { z } from 'zod';
import { sha256Hex } from '../security';
import { unknownGlobs } from './catalogue';
import { PROVIDER_NAMES, providerNamed } from './registry';

const DEFAULT_TOLERANCE_SECONDS = 300;
const glob = z.string().min(1).max(200).regex(/^!?[^\s!]+$/, 'a glob: no spaces; "!" only in front');

/** The trigger's `provider` as the admin API and TRIGGERS_FILE accept it (contract §10). */
export const providerInputSchema = z
  .strictObject({
    name: z.string().refine((name) => providerNamed(name) !== undefined, {
      message: `unknown provider; one of: ${PROVIDER_NAMES.join(', ')}`,
    }),
    secrets: z.array(z.string().min(1).max(1024)).min(1).max(2),
    events: z.array(glob).min(1).max(100).optional(),
    toleranceSeconds: z.number().int().min(1).max(86_400).optional(),
    options: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((input, ctx) => {
    const provider = providerNamed(input.name);
    if (!provider) return;
    input.secrets.forEach((secret, i) => {
      const problem = provider.secretProblem?.(secret);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['secrets', i] });
    });
    if (provider.optionsSchema) {
      const parsed = provider.optionsSchema.safeParse(input.options ?? {});
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          ctx.addIssue({ code: 'custom', message: issue.message, path: ['options', ...issue.path] as (string | number)[] });
        }
      }
    } else if (input.options && Object.keys(input.options).length > 0) {
      ctx.addIssue({ code: 'custom', message: `${provider.name} takes no options`, path: ['options'] });
    }
    for (const { glob: bad, closest } of unknownGlobs(provider.name, input.events ?? [])) {
      ctx.addIssue({
        code: 'custom',
        message: `"${bad}" matches no documented ${provider.name} event kind; closest: ${closest.join(', ')}`,
        path: ['events', (input.events ?? []).indexOf(bad)],
        params: { reason: 'unknown_event_kind', glob: bad, closest },
      });
    }
  });

export type ProviderInput = z.infer<typeof providerInputSchema>;

/** As stored: secrets in plain text (HMAC needs them; the registry encrypts `secrets` at rest), a verify token only as its hash. */
export interface StoredProvider {
  name: string;
  secrets: string[];
  events?: string[];
  toleranceSeconds?: number;
  options?: Record<string, unknown>;
}

export function toStoredProvider(input: ProviderInput): StoredProvider {
  const provider = providerNamed(input.name);
  const parsedOptions = provider?.optionsSchema ? provider.optionsSchema.parse(input.options ?? {}) : undefined;
  let options: Record<string, unknown> | undefined;
  if (parsedOptions) {
    const { verifyToken, ...rest } = parsedOptions;
    options = { ...rest, ...(typeof verifyToken === 'string' && { verifyTokenHash: sha256Hex(verifyToken) }) };
  }
  return {
    name: input.name,
    secrets: [...input.secrets],
    ...(input.events && { events: [...input.events] }),
    ...(input.toleranceSeconds !== undefined && { toleranceSeconds: input.toleranceSeconds }),
    ...(options && Object.keys(options).length > 0 && { options }),
  };
}

/** As the admin API shows it: how many secrets are set, never a secret or a token hash. */
export function publicProvider(stored: StoredProvider) {
  const { verifyTokenHash, ...options } = stored.options ?? {};
  const shownOptions = { ...options, ...(verifyTokenHash !== undefined && { verifyTokenSet: true }) };
  return {
    name: stored.name,
    secretsSet: stored.secrets.length,
    ...(stored.events && { events: stored.events }),
    toleranceSeconds: effectiveTolerance(stored),
    ...(Object.keys(shownOptions).length > 0 && { options: shownOptions }),
  };
}

export function effectiveTolerance(stored: StoredProvider): number {
  return stored.toleranceSeconds ?? providerNamed(stored.name)?.defaultToleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
}
