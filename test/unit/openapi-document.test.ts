import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import type { createApp } from '../../src/app';
import { configSchema } from '../../src/config/schema';
import { REASONS, type Reason } from '../../src/outcomes/reasons';
import { LISTENERS, OPERATION_REASONS, openApiDocument, openApiDocumentText, type Listener } from '../../src/routes/openapi-document';
import { EVERY_OPERATION } from '../../src/openapi/responses';
import { testApp } from '../helpers/app';

const COMMITTED = join(__dirname, '..', '..', 'docs', 'openapi.json');

describe('the OpenAPI document', () => {
  it('docs/openapi.json is what the schemas generate now (run `npm run openapi` and commit it when this fails)', () => {
    expect(readFileSync(COMMITTED, 'utf8')).toBe(openApiDocumentText());
  });

  it('is a valid OpenAPI 3.1 document (@readme/openapi-parser: the 3.1 meta-schema and the spec rules)', async () => {
    const result = await validate(structuredClone(openApiDocument()) as never);
    if (!result.valid) throw new Error(compileErrors(result));
    expect(result.specification).toBe('OpenAPI');
    expect(result.warnings).toEqual([]);
  });

  it('the validator does refuse a broken document (it is not a no-op)', async () => {
    const broken = structuredClone(openApiDocument()) as any;
    broken.paths['/api/webhooks/trigger/{path}'].parameters = [];
    delete broken.components.schemas.ChatAck;
    const result = await validate(broken);
    expect(result.valid).toBe(false);
  });

  it('documents every reason of the catalogue on at least one operation', () => {
    const documented = new Set<Reason>([...EVERY_OPERATION, ...Object.values(OPERATION_REASONS).flat()]);
    expect((Object.keys(REASONS) as Reason[]).filter((reason) => !documented.has(reason))).toEqual([]);
  });

  it.each<Listener>(['public', 'admin'])(
    'names an operation for every route the %s listener answers, and no route it does not, with that listener in its servers',
    (listener) => {
      const t = testApp();
      const app = listener === 'public' ? t.app : t.admin;
      // Parameter names differ (`:id` in the router, `{path}` in the document): compare the shapes.
      const shape = (path: string) => path.replace(/:[A-Za-z]+|\{[A-Za-z]+\}/g, '{}');
      const routes = new Set(appRoutes(app).map(shape));
      expect(routes.size).toBeGreaterThan(1);
      const documented = Object.entries(openApiDocument().paths as Record<string, { servers: unknown[] }>)
        .filter(([, item]) => item.servers.includes(LISTENERS[listener]))
        .map(([path]) => shape(path));
      expect([...routes].sort()).toEqual(documented.sort());
    },
  );

  it('names every path\'s listeners in its servers, with the ports the settings default to', () => {
    const doc = openApiDocument() as any;
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      expect(`${path}: ${item.servers.length}`).toMatch(/: [12]$/);
      for (const server of item.servers) expect(doc.servers).toContainEqual(server);
    }
    const defaults = configSchema.parse({});
    expect(LISTENERS.public.variables.port.default).toBe(String(defaults.PORT));
    expect(LISTENERS.admin.variables.adminPort.default).toBe(String(defaults.ADMIN_PORT));
  });

  it('describes every error with the contract envelope and a reason from the catalogue', () => {
    const doc = openApiDocument() as any;
    for (const [name, response] of Object.entries<any>(doc.components.responses)) {
      const schema = response.content['application/json'].schema;
      expect(`${name}: ${JSON.stringify(schema.allOf)}`).toBe(`${name}: [{"$ref":"#/components/schemas/Error"}]`);
      for (const reason of schema.properties.error.properties.details.anyOf[1].properties.reason.enum) {
        expect(REASONS[reason as Reason].code).toBe(schema.properties.error.properties.code.const);
      }
    }
    const envelope = doc.components.schemas.Error;
    expect(envelope.required).toEqual(['error']);
    expect(envelope.properties.error.required).toEqual(['code', 'message']);
  });
});

/** Paths of the routes an express app answers (its router's route layers, recursively). */
function appRoutes(app: ReturnType<typeof createApp>): string[] {
  const paths: string[] = [];
  const walk = (stack: any[]) => {
    for (const layer of stack) {
      if (layer.route) paths.push(layer.route.path);
      else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as any).router.stack);
  return paths;
}
