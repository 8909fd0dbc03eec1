import { configSchema, type Config } from './schema';

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** Parses the environment once. Empty strings count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv): ConfigResult {
  const input: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`),
    };
  }
  return { ok: true, config: Object.freeze(parsed.data) };
}

/** The config as it may be logged: secrets replaced, credentials in URLs removed. */
export function redactConfig(config: Config): Record<string, unknown> {
  const redacted: Record<string, unknown> = { ...config };
  if (config.ADMIN_TOKEN) redacted.ADMIN_TOKEN = '[set]';
  if (config.REDIS_URL) {
    const url = new URL(config.REDIS_URL);
    if (url.password) url.password = '***';
    if (url.username) url.username = '***';
    redacted.REDIS_URL = url.toString();
  }
  return redacted;
}
