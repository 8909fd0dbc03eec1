/**
 * No run-time import loop through src/ingest/ (issue 35: multipart.ts and body-identity.ts
 * required each other): a module never requires, through others, a module that
 * requires it (a loop hands one of them the other's exports half-built, depending on which was
 * loaded first). Imports of types only are erased by the compiler and do not count.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = join(__dirname, '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The modules of src/ that `source` needs at run time: `import`, `export … from` and `require` of a relative path, types only left out. */
function runtimeImports(source: string): string[] {
  const found: string[] = [];
  const statement = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"](\.[^'"]+)['"]|(?:^|\n)\s*import\s+['"](\.[^'"]+)['"]|require\(['"](\.[^'"]+)['"]\)/g;
  for (const match of source.matchAll(statement)) {
    const [, , typeOnly, clause, from, bare, required] = match;
    if (bare ?? required) {
      found.push((bare ?? required)!);
      continue;
    }
    if (typeOnly) continue;
    const names = /^\{([\s\S]*)\}$/.exec(clause.trim());
    const allTypes = names && names[1].split(',').map((name) => name.trim()).filter(Boolean).every((name) => name.startsWith('type '));
    if (!allTypes) found.push(from);
  }
  return found;
}

function resolveModule(from: string, specifier: string, files: Set<string>): string | undefined {
  const base = resolve(dirname(from), specifier);
  return [`${base}.ts`, join(base, 'index.ts')].find((candidate) => files.has(candidate));
}

/** Every loop, as the chain of files that closes it. */
function importLoops(sources: Map<string, string>): string[][] {
  const files = new Set(sources.keys());
  const edges = new Map([...sources].map(([file, text]) => [file, runtimeImports(text).flatMap((spec) => resolveModule(file, spec, files) ?? [])]));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const loops: string[][] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === 'open') loops.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return loops;
}

describe('src/ingest/ has no run-time import loop', () => {
  it('none through any of its modules', () => {
    const sources = new Map(sourceFiles(SRC).map((file) => [file, readFileSync(file, 'utf8')]));
    const loops = importLoops(sources).map((loop) => loop.map((file) => relative(SRC, file)).join(' -> '));
    expect(loops.filter((loop) => loop.includes('ingest/'))).toEqual([]);
  });

  it('finds a loop, and leaves out imports of types only', () => {
    const at = (name: string) => join(SRC, `${name}.ts`);
    const sources = new Map([
      [at('a'), "import { b } from './b';\nimport type { C } from './c';"],
      [at('b'), "import { helper, type A } from './a';"],
      [at('c'), "import { type A } from './a';\nexport { c } from './d';"],
      [at('d'), "const c = require('./c');"],
    ]);
    const loops = importLoops(sources).map((loop) => loop.map((file) => relative(SRC, file)));
    expect(loops).toEqual([
      ['a.ts', 'b.ts', 'a.ts'],
      ['c.ts', 'd.ts', 'c.ts'],
    ]);
  });

  it("imports no dependency's private modules (busboy's lib/utils was one), only a package's own entry", () => {
    const privatePath = /(?:from\s*|require\()['"]((?:@[^/'"]+\/)?[^./'"][^/'"]*\/(?:lib|src|dist|build|internal)\/[^'"]*)['"]/g;
    const found = sourceFiles(join(SRC, 'ingest')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(privatePath)].map((match) => `${relative(SRC, file)}: ${match[1]}`),
    );
    expect(found).toEqual([]);
  });
});
