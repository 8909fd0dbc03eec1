import { Refusal } from '../outcomes/refusal';

/**
 * RFC 9112 §3.2: a server must answer 400 to a request with more than one Host header. Node
 * keeps the first in `req.headers.host` and drops the rest silently, while a proxy in front may
 * have routed (or a cache keyed) the request by another: the two would disagree about which
 * site the request is for. Only `req.rawHeaders` still shows every copy.
 */
export function duplicateHost(rawHeaders: readonly string[]): Refusal | undefined {
  let hosts = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length === 4 && name.toLowerCase() === 'host' && ++hosts > 1) {
      return new Refusal('duplicate_host', 'the request has more than one Host header', { header: 'Host' });
    }
  }
  return undefined;
}
