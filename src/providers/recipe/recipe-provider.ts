import { z } from 'zod';
import type { Provider } from '../provider';
import { recipeScheme } from './engine';
import { isPublicKeyAlgorithm } from './public-keys';
import { recipeSchema, signatureHeadersOf, type Recipe } from './schema';
import { secretProblem } from './secret-key';
import { deliveryIdOf, deliveryIdSigned, kindOf } from './sources';

/** How a trigger's options denote its recipe: `recipe` reads `options.recipe`; `hmac` maps its own options; a preset ships one. */
export type RecipeOf = (options: Record<string, unknown>) => Recipe;

const signsTimestamp = (recipe: Recipe) => recipe.signedContent.includes('{timestamp}');

/**
 * The parts of a Provider that follow from a recipe: the checks, the headers never published,
 * the keys the trigger holds, the kind and the delivery id. One engine for every preset of the
 * HMAC, Ed25519, ECDSA and RSA families (contract §10.1 C).
 */
export function recipeParts(recipeOf: RecipeOf) {
  return {
    signsTimestamp: (options: Record<string, unknown>) => signsTimestamp(recipeOf(options)) && !recipeOf(options).timestamp?.retriesKeepTimestamp,
    deliveryIdFrom: (options: Record<string, unknown>) => (deliveryIdSigned(recipeOf(options)) ? ('signed' as const) : ('header' as const)),
    signatureHeaders: (options: Record<string, unknown>) => signatureHeadersOf(recipeOf(options)),
    signsUrl: (options: Record<string, unknown>) => recipeOf(options).signedContent.includes('{url}'),
    timestampHeader: (options: Record<string, unknown>) => recipeOf(options).timestamp?.header,
    secretProblem: (secret: string, options: Record<string, unknown> = {}) => secretProblem(secret, recipeOf(options).key),
    keys(options: Record<string, unknown>) {
      const { algorithm } = recipeOf(options);
      return isPublicKeyAlgorithm(algorithm) ? { secrets: false, publicKeys: algorithm } : { secrets: true };
    },
    kind: ((headers, body, raw, options = {}) => kindOf(recipeOf(options), { headers, body, raw })) satisfies Provider['kind'],
    deliveryId: ((headers, body, raw, options = {}) => deliveryIdOf(recipeOf(options), { headers, body, raw })) satisfies Provider['deliveryId'],
    precheck: ((head) => recipeScheme(recipeOf(head.options)).precheck(head)) satisfies Provider['precheck'],
    verify: ((request) => recipeScheme(recipeOf(request.options)).verify(request)) satisfies Provider['verify'],
  };
}

/** The recipe a stored `recipe` trigger carries (validated at PUT, stored as parsed). */
const storedRecipe: RecipeOf = (options) => options.recipe as Recipe;

const recipeOptionsSchema = z.strictObject({ recipe: recipeSchema });

/** `name: "recipe"`: the whole scheme as data in the trigger (contract §10.1 C). */
export const recipe: Provider = {
  name: 'recipe',
  title: 'Declarative recipe (any sender of the HMAC or public-key families, described in options.recipe)',
  verifies: 'options.recipe: the signature header(s) and format, the signed content template over the raw body, the algorithm (HMAC-SHA1/256/512, Ed25519, ECDSA P-256, RSA PKCS#1) and the key form',
  deliveryIdSource: 'options.recipe.deliveryId (a header, a body JSON pointer, or a list tried in order); an unsigned header id is backed by the body claim',
  family: 'hmac-recipe',
  authenticates: 'body',
  // SendGrid-like schemes keep their first timestamp on retries: no tolerance unless the trigger sets one.
  defaultToleranceFor: (options) => (storedRecipe(options).timestamp?.retriesKeepTimestamp ? 0 : 300),
  optionsSchema: recipeOptionsSchema as unknown as z.ZodType<Record<string, unknown>>,
  ...recipeParts(storedRecipe),
};
