import { z } from 'zod';
import { PROVIDER_NAMES } from '../providers/registry';
import { inputComponents, outputComponents, pascal, providerOptionSchemas } from './schemas';

export type JsonSchema = Record<string, unknown>;

const REF_PREFIX = '#/components/schemas/';

/**
 * The zod schemas as JSON Schema 2020-12 (the dialect of OpenAPI 3.1), one component each,
 * referring to one another by `#/components/schemas/<name>`. Converted as zod reads them
 * (`io: input`): for the few transforms (header names lower-cased) that also describes what
 * the gateway writes.
 */
export function schemaComponents(): Record<string, JsonSchema> {
  const components = convert({ ...inputComponents, ...outputComponents });
  describeProviderInput(components.ProviderInput);
  return Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b)));
}

export function ref(name: string): JsonSchema {
  return { $ref: `${REF_PREFIX}${name}` };
}

function convert(schemas: Record<string, z.ZodType>): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const converted = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'input',
    // Refinements (a provider name that exists, a secret the scheme can use) are checked by
    // the gateway and described in words; everything else zod can express is kept.
    unrepresentable: 'any',
    uri: (id) => `${REF_PREFIX}${id}`,
  }).schemas as Record<string, JsonSchema>;
  if (converted.__shared) {
    // A schema used in several places without a name of its own: give it one in schemas.ts.
    throw new Error(`unnamed shared schemas in the OpenAPI components: ${Object.keys(converted.__shared.$defs as object).join(', ')}`);
  }
  for (const schema of Object.values(converted)) {
    delete schema.$schema;
    delete schema.$id;
  }
  return converted;
}

/**
 * `provider.name` is checked by a refinement (zod cannot express it): list the names, and
 * say which options each preset takes, as JSON Schema conditionals on the name.
 */
function describeProviderInput(schema: JsonSchema): void {
  const properties = schema.properties as Record<string, JsonSchema>;
  properties.name = { ...properties.name, enum: [...PROVIDER_NAMES] };
  properties.options = {
    ...properties.options,
    description: `only for ${Object.keys(providerOptionSchemas).join(' and ')}; see the conditionals on name`,
  };
  schema.allOf = Object.keys(providerOptionSchemas).map((name) => ({
    if: { properties: { name: { const: name } }, required: ['name'] },
    then: { properties: { options: ref(`${pascal(name)}ProviderOptions`) } },
  }));
}
