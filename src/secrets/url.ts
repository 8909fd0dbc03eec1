import { isCredentialName } from './names';

const MASK = '***';

/**
 * A URL as it may be logged: user-info and credential-like query parameters (`password=`,
 * `token=`, `X-Amz-Signature=`, …) masked. Text that is not a URL comes back unchanged, except
 * that anything looking like `scheme://user:pass@` or `password=…` in it is masked too.
 */
export function redactUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return redactUrlLikeText(text);
  }
  if (!url.host) return redactUrlLikeText(text);
  const credentialParams = [...new Set(url.searchParams.keys())].filter(isCredentialName);
  const credentialHash = /[=:@]/.test(url.hash);
  // Untouched when there is nothing to mask: serialising would normalise it (a trailing slash, case).
  if (!url.username && !url.password && credentialParams.length === 0 && !credentialHash) return text;
  if (url.username) url.username = MASK;
  if (url.password) url.password = MASK;
  for (const name of credentialParams) url.searchParams.set(name, MASK);
  if (credentialHash) url.hash = MASK;
  return url.toString();
}

function redactUrlLikeText(text: string): string {
  return text
    .replace(/(\/\/)[^/?#@\s]*@/g, `$1${MASK}@`)
    .replace(/([?&;]([^=&;#\s]*)=)([^&;#\s]*)/g, (whole, head: string, name: string) =>
      isCredentialName(name) ? `${head}${MASK}` : whole,
    );
}

/** The secret values a URL carries (decoded and as written), to scrub from error messages. */
export function urlCredentials(text: string): string[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [];
  }
  // Not the user name: it is no secret, and scrubbing a short one ("default") would mangle messages.
  const found = [url.password];
  for (const [name, value] of url.searchParams) if (isCredentialName(name)) found.push(value);
  const all = new Set<string>();
  for (const value of found) {
    if (!value) continue;
    all.add(value);
    try {
      all.add(decodeURIComponent(value));
    } catch {
      // not percent-encoded: the raw form is already there
    }
  }
  return [...all].filter((value) => value.length > 0).sort((a, b) => b.length - a.length);
}
