/**
 * The layer order of src/ (docs/layers.md): a module imports only from its own layer or the
 * layers below it. The order and the imports that still run back up are read from
 * docs/layers.md, so the document and this test cannot disagree: an upward import not listed
 * there fails the test, and so does a listed one that is gone (cross it off the list). Imports
 * of types count too: a type import up the order ties the lower layer to the upper one as
 * firmly, even though the compiler erases it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const SRC = join(ROOT, 'src');
const DOC = readFileSync(join(ROOT, 'docs', 'layers.md'), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every relative specifier a source text imports: static, type-only, re-exports, side-effect imports, dynamic import and require. */
function relativeSpecifiers(text: string): string[] {
  const found = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]);
  return found.filter((specifier) => specifier.startsWith('.'));
}

/** The layer of a path under src/ (a file, or a specifier as written): its top folder (`routes/`) or, for a file at the top, the file (`app.ts`). */
function layerOf(path: string): string {
  const [first, ...rest] = relative(SRC, path).split('/');
  if (rest.length > 0 || existsSync(join(SRC, first, 'index.ts'))) return `${first}/`;
  return `${first.replace(/\.(ts|js)$/, '')}.ts`;
}

/** The lines of the fenced block that follows `heading` in docs/layers.md, each up to its first space. */
function docBlock(heading: string): string[] {
  const at = DOC.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`docs/layers.md has no heading ${heading}`);
  const block = /```\n([\s\S]*?)```/.exec(DOC.slice(at));
  if (!block) throw new Error(`docs/layers.md has no block under ${heading}`);
  return block[1]
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => line.trim().replace(/\s{2,}.*$/, ''));
}

/** "<file> -> <layer>" for every file that imports from a layer above its own (once per file and layer). */
function upwardImports(sources: Map<string, string>, order: string[]): string[] {
  const rank = (layer: string) => order.indexOf(layer);
  const places = new Set<string>();
  for (const [file, text] of sources) {
    for (const specifier of relativeSpecifiers(text)) {
      const path = resolve(dirname(file), specifier);
      if (relative(SRC, path).startsWith('..')) continue; // outside src/: no layer
      const target = layerOf(path);
      if (rank(target) < rank(layerOf(file))) places.add(`${relative(SRC, file)} -> ${target}`);
    }
  }
  return [...places].sort();
}

const ORDER = docBlock('## The order');
const STILL_UPWARD = docBlock('## Imports that still run up');

describe('src/ imports down the layer order of docs/layers.md', () => {
  const sources = new Map(sourceFiles(SRC).map((file) => [file, readFileSync(file, 'utf8')]));

  it('every folder and top-level file of src/ has its place in the order, once', () => {
    const layers = new Set([...sources.keys()].map(layerOf));
    expect([...layers].filter((layer) => !ORDER.includes(layer)).sort()).toEqual([]);
    expect(ORDER.filter((layer) => !layers.has(layer))).toEqual([]);
    expect(new Set(ORDER).size).toBe(ORDER.length);
  });

  it('no import runs up the order but those docs/layers.md lists, and each one listed is still there', () => {
    expect(upwardImports(sources, ORDER)).toEqual([...STILL_UPWARD].sort());
  });

  it('an upward import planted in a lower layer is found, however it is written; imports down are not', () => {
    const order = ['routes/', 'ingest/', 'outcomes/'];
    const at = (name: string) => join(SRC, name);
    for (const line of [
      "import { webhookRoutes } from '../routes/webhooks';",
      "import type { Admission } from '../routes/webhooks';",
      "export { x } from '../routes/webhooks';",
      "const { webhookRoutes } = require('../routes/webhooks');",
      "const routes = await import('../routes/webhooks');",
    ]) {
      expect(upwardImports(new Map([[at('ingest/accept.ts'), line]]), order)).toEqual(['ingest/accept.ts -> routes/']);
    }
    const down = new Map([
      [at('routes/webhooks.ts'), "import { accept } from '../ingest/accept';\nimport { Refusal } from '../outcomes/refusal';"],
      [at('ingest/accept.ts'), "import { Refusal } from '../outcomes/refusal';\nimport { helper } from './helper';"],
    ]);
    expect(upwardImports(down, order)).toEqual([]);
  });
});
