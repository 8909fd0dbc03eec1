import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { toStoredChannel, toStoredTrigger } from './records';
import type { Registry } from './registry';
import { channelInputSchema, CHANNEL_ID_PATTERN, PATH_PATTERN, triggerInputSchema } from './schemas';

const seedSchema = z.strictObject({
  triggers: z.record(z.string().regex(PATH_PATTERN), triggerInputSchema).default({}),
  channels: z.record(z.string().regex(CHANNEL_ID_PATTERN), channelInputSchema).default({}),
});

/** Reads TRIGGERS_FILE; returns one line per problem, or the counts upserted. */
export async function seedRegistry(registry: Registry, file: string): Promise<{ problems: string[]; triggers: number; channels: number }> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    return { problems: [`TRIGGERS_FILE: cannot read ${file}: ${(error as Error).message}`], triggers: 0, channels: 0 };
  }
  const parsed = seedSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `TRIGGERS_FILE: ${issue.path.join('.')}: ${issue.message}`);
    return { problems, triggers: 0, channels: 0 };
  }
  const { triggers, channels } = parsed.data;
  for (const [path, trigger] of Object.entries(triggers)) await registry.triggers.put(path, toStoredTrigger(trigger));
  for (const [id, channel] of Object.entries(channels)) await registry.channels.put(id, toStoredChannel(channel));
  return { problems: [], triggers: Object.keys(triggers).length, channels: Object.keys(channels).length };
}
