import { MemoryRegistry } from '../../src/registry/memory';
import { seedRegistry } from '../../src/registry/seed-file';
import { refFanOut } from '../helpers/hostile-schemas';
import { tempDir, writeJson } from '../helpers/tmp';

/** Contract §13.1: TRIGGERS_FILE's schemas meet the same bounds as a PUT's. */
describe('TRIGGERS_FILE schemas', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());
  const trigger = (schema: unknown) => ({ workflowId: 'wf', workspaceId: 'ws', deployed: true, schema });

  it('refuses a schema that cannot compile within its budget, and a $ref loop; nothing is written', async () => {
    const registry = new MemoryRegistry();
    const file = writeJson(tmp.dir, 'triggers.json', {
      triggers: { fine: trigger({ type: 'object' }), fan: trigger(refFanOut(100)), loop: trigger({ allOf: [{ $ref: '#' }] }) },
    });
    const result = await seedRegistry(registry, file);
    expect(result.problems).toEqual([`TRIGGERS_FILE: triggers.loop.schema: /: its $ref leads back to itself without descending into the value (an endless loop)`]);
    const withoutLoop = writeJson(tmp.dir, 'triggers2.json', { triggers: { fine: trigger({ type: 'object' }), fan: trigger(refFanOut(100)) } });
    expect((await seedRegistry(registry, withoutLoop)).problems).toEqual([
      'TRIGGERS_FILE: triggers.fan.schema: the schema amounts to more than 10000 keywords once each $ref is counted where it is used',
    ]);
    expect(await registry.triggers.get('fine')).toBeUndefined();
    await registry.close();
  });
});
