import { longestDrainMs } from '../publish/timing';
import { configSchema, type Config } from './schema';
import { placeholderProblems } from './redact';
import { crossFieldProblems } from './rules';

export { redactConfig } from './redact';

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
  const config = parsed.data;
  // Unset, the grace outlasts the longest drain: a longer PUBLISH_TIMEOUT_MS alone never stops the start.
  if (input.SHUTDOWN_GRACE_MS === undefined) {
    config.SHUTDOWN_GRACE_MS = Math.max(config.SHUTDOWN_GRACE_MS, longestDrainMs(config.PUBLISH_TIMEOUT_MS));
  }
  const problems = [...placeholderProblems(config), ...crossFieldProblems(config)];
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config: Object.freeze(config) };
}
