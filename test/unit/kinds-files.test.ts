import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KINDS_DIR, KINDS_FILES, readKindsFiles } from '../../src/providers/kinds-files';

/** Issue 36: a new sender's kinds file is a file in the folder, no import line. */
describe('kinds files', () => {
  it('are every JSON file of src/providers/kinds, each named after its provider', () => {
    const names = readdirSync(KINDS_DIR).filter((name) => name.endsWith('.json'));
    expect(KINDS_FILES.map((file) => `${file.provider}.json`).sort()).toEqual(names.sort());
  });

  it('reads a file dropped into the folder and refuses a malformed one by name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kinds-'));
    try {
      writeFileSync(join(dir, 'acme.json'), JSON.stringify({ provider: 'acme', sources: ['https://acme.example/docs'], kinds: ['order.paid'] }));
      expect(readKindsFiles(dir)).toEqual([{ provider: 'acme', sources: ['https://acme.example/docs'], kinds: ['order.paid'] }]);
      writeFileSync(join(dir, 'other.json'), JSON.stringify({ provider: 'acme', sources: [], kinds: [] }));
      expect(() => readKindsFiles(dir)).toThrow('kinds file other.json');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
