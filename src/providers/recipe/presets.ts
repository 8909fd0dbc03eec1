import { z } from 'zod';
import entries from '../presets.json';
import type { Acknowledgement, Family, Handshake, Provider } from '../provider';
import { discordAcknowledgement, discordHandshake, discordOptionsSchema, discordRecipe } from '../handshakes/discord';
import { twitchHandshake } from '../handshakes/twitch';
import { dropboxHandshake } from '../handshakes/dropbox';
import { xeroHandshake } from '../handshakes/xero';
import { worldlineHandshake } from '../handshakes/worldline';
import { describeDeliveryId, describeVerifies } from './describe';
import { recipeParts } from './recipe-provider';
import { recipeSchema, type Recipe } from './schema';

/**
 * The code a shipped recipe may name: a handshake and what goes with it (its options, the
 * recipe they select, the acknowledgement). Everything else about a preset is its catalogue
 * entry in presets.json.
 */
interface Extension {
  handshake: Handshake;
  optionsSchema?: z.ZodType<Record<string, unknown>>;
  recipeFor?(shipped: Recipe, options: Record<string, unknown>): Recipe;
  acknowledgement?(options: Record<string, unknown>): Acknowledgement | undefined;
}

const EXTENSIONS: Record<string, Extension> = {
  dropbox: { handshake: dropboxHandshake },
  twitch: { handshake: twitchHandshake },
  xero: { handshake: xeroHandshake },
  worldline: { handshake: worldlineHandshake },
  discord: {
    handshake: discordHandshake,
    optionsSchema: discordOptionsSchema as unknown as z.ZodType<Record<string, unknown>>,
    recipeFor: discordRecipe,
    acknowledgement: discordAcknowledgement,
  },
};

/** One catalogue entry (src/providers/presets.json): a preset of a recipe family, as data. */
export const presetEntrySchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9-]{1,40}$/),
  title: z.string().min(1).max(200),
  family: z.enum(['hmac-recipe', 'ed25519', 'ecdsa', 'rsa']),
  authenticates: z.enum(['body', 'fields', 'sender']),
  /** Default tolerance of the signed timestamp (contract §10.1 C's table); the trigger's toleranceSeconds overrides. */
  toleranceSeconds: z.number().int().min(1).max(3600).optional(),
  handshake: z.enum(Object.keys(EXTENSIONS) as [string, ...string[]]).optional(),
  /** Kinds that only test the URL: published only when an `events` glob lists them (contract §10). */
  pings: z.array(z.string().min(1).max(64)).max(4).optional(),
  /** What the catalogue's `verifies` adds to the line written from the recipe (the key's form, what is not checked). */
  notes: z.string().max(300).optional(),
  recipe: recipeSchema,
});
export type PresetEntry = z.infer<typeof presetEntrySchema>;

const DEFAULT_TOLERANCE_SECONDS = 300;

export function presetProvider(entry: PresetEntry, shippedRecipe: unknown): Provider {
  const extension = entry.handshake ? EXTENSIONS[entry.handshake] : undefined;
  const recipeOf = (options: Record<string, unknown>) => extension?.recipeFor?.(entry.recipe, options) ?? entry.recipe;
  return {
    name: entry.name,
    title: entry.title,
    verifies: describeVerifies(entry.recipe) + (entry.notes ? `; ${entry.notes}` : ''),
    deliveryIdSource: describeDeliveryId(entry.recipe),
    family: entry.family as Family,
    authenticates: entry.authenticates,
    recipe: shippedRecipe,
    defaultToleranceSeconds: entry.recipe.timestamp?.retriesKeepTimestamp ? 0 : (entry.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS),
    ...recipeParts(recipeOf),
    ...(entry.pings && { pings: entry.pings }),
    ...(extension && { handshake: extension.handshake }),
    ...(extension?.optionsSchema && { optionsSchema: extension.optionsSchema }),
    ...(extension?.acknowledgement && { acknowledgement: extension.acknowledgement }),
  };
}

/** Every shipped recipe preset, checked against the recipe rules as they load (a bad entry fails the start and its test). */
export const RECIPE_PRESETS: readonly Provider[] = (entries as unknown[]).map((raw) => {
  const entry = presetEntrySchema.parse(raw);
  return presetProvider(entry, (raw as { recipe: unknown }).recipe);
});

/** One shipped recipe preset by name (the §10 presets that became catalogue entries keep their module as this one line). */
export function shippedPreset(name: string): Provider {
  const found = RECIPE_PRESETS.find((provider) => provider.name === name);
  if (!found) throw new Error(`no shipped recipe preset ${name}`);
  return found;
}
