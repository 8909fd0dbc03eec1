/**
 * `events` globs over a provider's event kinds: `*` is one `.`-separated segment (or part of
 * one: `orders/*`), `**` any number of characters across segments, a leading `!` excludes.
 * Without an include glob every kind is included.
 *
 * Matching walks the kind once per glob token, keeping the set of kind positions reachable so
 * far (no backtracking regular expression): time O(glob × kind) whatever the glob, so
 * `a.**.**.**.z` against a kind of 100 dots costs microseconds, not seconds (contract §10).
 */
export interface EventFilter {
  includes(kind: string): boolean;
  /** An include glob names the kind (and no `!` glob excludes it): `includes` without the "no include glob: every kind" rule. */
  lists(kind: string): boolean;
}

/** Longest kind a delivery may carry (contract §10): longer ones are refused 400 `kind_too_long`. */
export const MAX_KIND_LENGTH = 256;

type Token = { literal: string } | 'star' | 'globstar';

export interface CompiledGlob {
  test(kind: string): boolean;
}

function tokenize(glob: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] !== '*') tokens.push({ literal: glob[i] });
    else if (glob[i + 1] === '*') {
      // `***…` is no wider than `**`; collapsing keeps the work proportional to the glob.
      while (glob[i + 1] === '*') i++;
      if (tokens.at(-1) !== 'globstar') tokens.push('globstar');
    } else if (tokens.at(-1) !== 'globstar') tokens.push('star');
  }
  return tokens;
}

export function compileGlob(glob: string): CompiledGlob {
  const tokens = tokenize(glob);
  return {
    test(kind) {
      // reachable[i]: the tokens so far can match kind[0, i).
      let reachable = new Uint8Array(kind.length + 1);
      reachable[0] = 1;
      for (const token of tokens) {
        const next = new Uint8Array(kind.length + 1);
        let any = false;
        for (let i = 0; i <= kind.length; i++) {
          if (token === 'globstar') next[i] = reachable[i] | (i > 0 ? next[i - 1] : 0);
          else if (token === 'star') next[i] = reachable[i] | (i > 0 && kind[i - 1] !== '.' ? next[i - 1] : 0);
          else next[i] = i > 0 && reachable[i - 1] && kind[i - 1] === token.literal ? 1 : 0;
          if (next[i]) any = true;
        }
        if (!any) return false;
        reachable = next;
      }
      return reachable[kind.length] === 1;
    },
  };
}

const CACHE_LIMIT = 1000;
const cache = new Map<string, EventFilter>();

export function eventFilter(globs: readonly string[]): EventFilter {
  const key = globs.join('\n');
  const cached = cache.get(key);
  if (cached) return cached;
  const include = globs.filter((glob) => !glob.startsWith('!')).map(compileGlob);
  const exclude = globs.filter((glob) => glob.startsWith('!')).map((glob) => compileGlob(glob.slice(1)));
  const excluded = (kind: string) => exclude.some((glob) => glob.test(kind));
  const filter: EventFilter = {
    includes: (kind) => (include.length === 0 || include.some((glob) => glob.test(kind))) && !excluded(kind),
    lists: (kind) => include.some((glob) => glob.test(kind)) && !excluded(kind),
  };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, filter);
  return filter;
}
