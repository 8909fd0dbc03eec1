import { configSchema } from './schema';
import { editDistance } from '../edit-distance';

export interface UnknownSetting {
  name: string;
  /** The known setting nearest in spelling (edit distance). */
  closest: string;
}

/**
 * Prefixes owned by others although a setting of ours starts with them: the OpenTelemetry
 * SDK reads its own OTEL_* variables (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES…).
 */
const FOREIGN_PREFIXES = ['OTEL_'];

/**
 * Kubernetes' service links: for a Service `redis` or `kafka` in the namespace every pod gets
 * REDIS_SERVICE_HOST, REDIS_PORT, REDIS_PORT_6379_TCP_ADDR… (enableServiceLinks, on by default).
 */
const SERVICE_LINK = /_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_[0-9]+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)$/;

/** Edits from a setting's name that still count as its misspelling (SECRET_KEY is 1 from SECRETS_KEY). */
const NEARLY = 2;

const KNOWN = Object.keys(configSchema.shape);
const PREFIXES = [...new Set(KNOWN.filter((name) => name.includes('_')).map((name) => `${name.split('_')[0]}_`))].filter(
  (prefix) => !FOREIGN_PREFIXES.includes(prefix),
);

/**
 * Environment variables that look like a setting (a known setting's first word, e.g. REDIS_,
 * KAFKA_, S3_, or a name of several words at most two edits from one) but are none: most likely a misspelling, which would otherwise be ignored
 * without a word (REDIS_URI leaves the gateway in embedded mode). Reported, not refused:
 * the environment is shared with the platform and other tools.
 */
export function unknownSettings(env: NodeJS.ProcessEnv): UnknownSetting[] {
  const found: UnknownSetting[] = [];
  for (const name of Object.keys(env).sort()) {
    if (KNOWN.includes(name) || SERVICE_LINK.test(name) || FOREIGN_PREFIXES.some((prefix) => name.startsWith(prefix))) continue;
    const closest = closestSetting(name);
    const nearlyKnown = name.includes('_') && editDistance(name, closest) <= NEARLY;
    if (nearlyKnown || PREFIXES.some((prefix) => name.startsWith(prefix))) found.push({ name, closest });
  }
  return found;
}

/** The known setting with the smallest edit distance to `name` (the first of a tie). */
export function closestSetting(name: string): string {
  let best = KNOWN[0];
  let bestDistance = Infinity;
  for (const known of KNOWN) {
    const distance = editDistance(name, known);
    if (distance < bestDistance) {
      best = known;
      bestDistance = distance;
    }
  }
  return best;
}
