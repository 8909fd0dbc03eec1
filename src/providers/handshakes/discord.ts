import { z } from 'zod';
import { field } from '../body';
import type { Acknowledgement, Handshake } from '../provider';
import type { Recipe } from '../recipe/schema';

export const discordOptionsSchema = z.strictObject({ endpoint: z.enum(['events', 'interactions']).optional() });

const interactions = (options: Record<string, unknown>) => options.endpoint === 'interactions';

/** Discord's PINGs, both signed: webhook events `type: 0` → 204; interactions `type: 1` → 200 {"type":1}. Nothing published. */
export const discordHandshake: Handshake = {
  method: 'POST',
  signed: true,
  describe: 'PING (signed POST): webhook events type 0 → 204; interactions (options.endpoint "interactions") type 1 → 200 {"type":1}',
  answer({ body, options }) {
    const type = field(body, 'type');
    if (interactions(options)) {
      return type === 1 ? { status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"type":1}' } : undefined;
    }
    return type === 0 ? { status: 204, headers: {} as Record<string, string>, body: '' } : undefined;
  },
};

/** The interactions endpoint: kind `interaction.<type>`, id the interaction's `id`; webhook events keep the shipped recipe. */
export function discordRecipe(shipped: Recipe, options: Record<string, unknown>): Recipe {
  if (!interactions(options)) return shipped;
  return { ...shipped, deliveryId: { body: '/id' }, kind: { join: [{ constant: 'interaction' }, { body: '/type' }], separator: '.' } };
}

export const discordAcknowledgement = (options: Record<string, unknown>): Acknowledgement =>
  interactions(options) ? 'deferred-interaction' : 'no-content';
