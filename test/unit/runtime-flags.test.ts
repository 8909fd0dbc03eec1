/** src/runtime-flags.ts: the V8 setting the process entry makes before it loads anything else. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('runtime flags', () => {
  it('switches allocation-site pretenuring off when imported', () => {
    const setFlagsFromString = jest.fn();
    jest.isolateModules(() => {
      jest.doMock('node:v8', () => ({ setFlagsFromString }));
      require('../../src/runtime-flags');
    });
    expect(setFlagsFromString.mock.calls).toEqual([['--no-allocation-site-pretenuring']]);
  });

  it('is the process entry’s first import, so the flag holds before the gateway’s code runs', () => {
    const main = readFileSync(join(__dirname, '../../src/main.ts'), 'utf8');
    const firstImport = main.split('\n').find((line) => line.startsWith('import '));
    expect(firstImport).toBe("import './runtime-flags';");
  });
});
