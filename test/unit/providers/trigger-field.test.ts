import { MemoryRegistry } from '../../../src/registry/memory';
import { publicTrigger, toStoredTrigger } from '../../../src/registry/records';
import { triggerInputSchema } from '../../../src/registry/schemas';
import { seedRegistry } from '../../../src/registry/seed-file';
import { tempDir, writeJson } from '../../helpers/tmp';

const base = { workflowId: 'wf', workspaceId: 'ws', deployed: true };

describe('the trigger provider field', () => {
  it('is stored with its secrets in plain text (HMAC needs them) and a verify token only as its hash', () => {
    const input = triggerInputSchema.parse({ ...base, provider: { name: 'meta', secrets: ['app-secret'], options: { verifyToken: 'vt' } } });
    const stored = toStoredTrigger(input);
    expect(stored.provider?.secrets).toEqual(['app-secret']);
    expect(stored.provider?.options).toEqual({ verifyTokenHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('is shown without secrets: secretsSet, events, the effective tolerance and options without secrets', () => {
    const stored = toStoredTrigger(
      triggerInputSchema.parse({ ...base, provider: { name: 'linear', secrets: ['a', 'b'], events: ['Issue.*'] } }),
    );
    const shown = publicTrigger('p', stored, 'https://gw.example.com');
    expect(shown.provider).toEqual({ name: 'linear', secretsSet: 2, events: ['Issue.*'], toleranceSeconds: 60 });
    expect(JSON.stringify(shown)).not.toMatch(/"a"|"b"/);
  });

  it('is accepted from TRIGGERS_FILE, and a typo in events is a problem naming the closest kinds', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const registry = new MemoryRegistry();
      const good = writeJson(dir, 'good.json', { triggers: { gh: { ...base, provider: { name: 'github', secrets: ['s'], events: ['push'] } } } });
      expect((await seedRegistry(registry, good)).problems).toEqual([]);
      expect((await registry.triggers.get('gh'))?.provider?.name).toBe('github');
      const bad = writeJson(dir, 'bad.json', { triggers: { gh: { ...base, provider: { name: 'github', secrets: ['s'], events: ['psh'] } } } });
      const { problems } = await seedRegistry(registry, bad);
      expect(problems).toEqual([expect.stringMatching(/triggers\.gh\.provider\.events\.0: "psh" matches no documented github event kind; closest: push/)]);
    } finally {
      cleanup();
    }
  });
});
