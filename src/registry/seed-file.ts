import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { schemaCompileProblem, type JsonSchema } from '../json-schema/compile';
import { sha256Hex } from '../security';
import { toStoredChannel, toStoredTrigger } from './records';
import type { Collection, Registry } from './registry';
import { channelInputSchema, CHANNEL_ID_PATTERN, PATH_PATTERN, triggerInputSchema } from './schemas';

const seedSchema = z.strictObject({
  triggers: z.record(z.string().regex(PATH_PATTERN), triggerInputSchema).default({}),
  channels: z.record(z.string().regex(CHANNEL_ID_PATTERN), channelInputSchema).default({}),
});

export interface SeedResult {
  /** One line per problem of the file; nothing was written when there is one. */
  problems: string[];
  /**
   * true: the file differs from the one last applied (or none was), so every entry in it was
   * written. false: the same file as last time, so only entries missing from the registry were
   * created, and changes made since through the admin API (a rotated token) are kept.
   */
  fileChanged: boolean;
  /** Entries written. */
  triggers: number;
  channels: number;
}

/**
 * Applies TRIGGERS_FILE. The SHA-256 of its bytes is stored in the registry once every entry
 * is in, so the next start (of any pod) knows whether the file changed since.
 */
export async function seedRegistry(registry: Registry, file: string): Promise<SeedResult> {
  const none = { fileChanged: false, triggers: 0, channels: 0 };
  let bytes: Buffer;
  let json: unknown;
  try {
    bytes = await readFile(file);
    json = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return { problems: [`TRIGGERS_FILE: cannot read ${file}: ${(error as Error).message}`], ...none };
  }
  const parsed = seedSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `TRIGGERS_FILE: ${issue.path.join('.')}: ${issue.message}`);
    return { problems, ...none };
  }
  const schemaProblems = await compileProblems(parsed.data.triggers);
  if (schemaProblems.length > 0) return { problems: schemaProblems, ...none };
  const hash = sha256Hex(bytes);
  const fileChanged = (await registry.appliedFileHash()) !== hash;
  let triggers = 0;
  let channels = 0;
  for (const [path, trigger] of Object.entries(parsed.data.triggers)) {
    if (await write(registry.triggers, path, toStoredTrigger(trigger), fileChanged)) triggers += 1;
  }
  for (const [id, channel] of Object.entries(parsed.data.channels)) {
    if (await write(registry.channels, id, toStoredChannel(channel), fileChanged)) channels += 1;
  }
  if (fileChanged) await registry.setAppliedFileHash(hash);
  return { problems: [], fileChanged, triggers, channels };
}

/** Each trigger's schema must compile within its budget, as at PUT (contract §13.1). */
async function compileProblems(triggers: Record<string, { schema?: JsonSchema }>): Promise<string[]> {
  const problems: string[] = [];
  for (const [path, trigger] of Object.entries(triggers)) {
    const found = trigger.schema === undefined ? undefined : await schemaCompileProblem(trigger.schema);
    if (found) problems.push(`TRIGGERS_FILE: triggers.${path}.schema: ${found.problem}`);
  }
  return problems;
}

/** Overwrites, or only creates what is missing; true when it wrote. */
async function write<T>(collection: Collection<T>, id: string, value: T, overwrite: boolean): Promise<boolean> {
  if (!overwrite) return collection.putIfAbsent(id, value);
  await collection.put(id, value);
  return true;
}
