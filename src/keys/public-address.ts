import { isIPv4, isIPv6 } from 'node:net';

/**
 * Whether an address a key host resolved to may be connected to (contract §10.1 F): never
 * loopback, private, link-local (the 169.254.169.254 metadata service), CGNAT, multicast,
 * reserved or documentation ranges, in IPv4 or IPv6, nor an IPv6 form that embeds such an
 * IPv4 address (mapped, NAT64, 6to4).
 */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return publicV4(v4Bytes(address));
  if (isIPv6(address)) {
    const bytes = v6Bytes(address);
    return bytes !== undefined && publicV6(bytes);
  }
  return false;
}

/** [first octets, prefix length] of the IPv4 ranges that are not public. */
const V4_BLOCKED: ReadonlyArray<[number[], number]> = [
  [[0], 8], // "this" network
  [[10], 8],
  [[100, 64], 10], // carrier-grade NAT
  [[127], 8],
  [[169, 254], 16], // link-local, cloud metadata
  [[172, 16], 12],
  [[192, 0, 0], 24], // IETF protocol assignments
  [[192, 0, 2], 24], // documentation
  [[192, 88, 99], 24], // 6to4 relay anycast
  [[192, 168], 16],
  [[198, 18], 15], // benchmarking
  [[198, 51, 100], 24],
  [[203, 0, 113], 24],
  [[224], 4], // multicast
  [[240], 4], // reserved, broadcast
];

/** [first bytes, prefix length] of the IPv6 ranges that are not public (embedded IPv4 forms are checked apart). */
const V6_BLOCKED: ReadonlyArray<[number[], number]> = [
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48], // local-use NAT64 (RFC 8215): a network's own translator, never a provider
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64], // discard
  [[0x20, 0x01, 0x00, 0x00], 32], // Teredo
  [[0x20, 0x01, 0x00], 23], // IETF protocol assignments
  [[0x20, 0x01, 0x0d, 0xb8], 32], // documentation
  [[0xfc], 7], // unique local
  [[0xfe, 0x80], 10], // link-local
  [[0xfe, 0xc0], 10], // site-local (deprecated)
  [[0xff], 8], // multicast
];

function inPrefix(bytes: Uint8Array, start: number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit++) {
    const mask = 0x80 >> bit % 8;
    const index = Math.floor(bit / 8);
    if ((bytes[index] & mask) !== ((start[index] ?? 0) & mask)) return false;
  }
  return true;
}

function v4Bytes(address: string): Uint8Array {
  return Uint8Array.from(address.split('.').map(Number));
}

function publicV4(bytes: Uint8Array): boolean {
  return !V4_BLOCKED.some(([start, bits]) => inPrefix(bytes, start, bits));
}

function publicV6(bytes: Uint8Array): boolean {
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  // ::/96 holds :: and ::1 and the deprecated IPv4-compatible form: none is a host to fetch from.
  if (zeros(0, 12)) return false;
  // ::ffff:a.b.c.d, mapped IPv4: the IPv4 address decides.
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return publicV4(bytes.subarray(12));
  // 64:ff9b::/96 NAT64 and 2002::/16 6to4 carry an IPv4 address that decides too.
  if (inPrefix(bytes, [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96)) return publicV4(bytes.subarray(12));
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return publicV4(bytes.subarray(2, 6));
  return !V6_BLOCKED.some(([start, bits]) => inPrefix(bytes, start, bits));
}

/** The 16 bytes of an IPv6 address (already checked by isIPv6), a zone id refused. */
function v6Bytes(address: string): Uint8Array | undefined {
  if (address.includes('%')) return undefined;
  let text = address;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    tail.push(...v4Bytes(dotted[1]));
    text = text.slice(0, -dotted[1].length) + '0:0';
  }
  const [head, rest] = text.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').filter((g) => g !== '') : []);
  const left = groups(head);
  const right = groups(rest);
  const fill = rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  const all = [...left, ...fill, ...right];
  if (all.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}
