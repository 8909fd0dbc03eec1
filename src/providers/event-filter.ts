/**
 * `events` globs over a provider's event kinds: `*` is one `.`-separated segment, `**` any
 * number of them, a leading `!` excludes. Without an include glob every kind is included.
 */
export interface EventFilter {
  includes(kind: string): boolean;
}

const CACHE_LIMIT = 1000;
const cache = new Map<string, EventFilter>();

export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (char === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (char === '*') {
      source += '[^.]*';
    } else {
      source += char.replace(/[\\^$.|?+()[\]{}]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

export function eventFilter(globs: readonly string[]): EventFilter {
  const key = globs.join('\n');
  const cached = cache.get(key);
  if (cached) return cached;
  const include = globs.filter((glob) => !glob.startsWith('!')).map(globToRegExp);
  const exclude = globs.filter((glob) => glob.startsWith('!')).map((glob) => globToRegExp(glob.slice(1)));
  const filter: EventFilter = {
    includes: (kind) => (include.length === 0 || include.some((re) => re.test(kind))) && !exclude.some((re) => re.test(kind)),
  };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, filter);
  return filter;
}
