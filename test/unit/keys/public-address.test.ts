import { isPublicAddress } from '../../../src/keys/public-address';

const publicAddresses = ['52.94.236.248', '8.8.8.8', '142.250.74.106', '2607:f8b0:4004:c1b::6a', '2a00:1450:4001:82b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808'];

const blocked: Array<[string, string]> = [
  ['0.0.0.0', 'unspecified'],
  ['10.1.2.3', 'private'],
  ['100.64.0.1', 'CGNAT'],
  ['100.127.255.254', 'CGNAT end'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.255', 'loopback end'],
  ['169.254.169.254', 'cloud metadata'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private end'],
  ['192.168.1.1', 'private'],
  ['192.0.0.8', 'IETF'],
  ['198.18.0.1', 'benchmarking'],
  ['203.0.113.9', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'mapped loopback'],
  ['::ffff:7f00:1', 'mapped loopback, hex'],
  ['::ffff:169.254.169.254', 'mapped metadata'],
  ['::ffff:10.0.0.1', 'mapped private'],
  ['::127.0.0.1', 'IPv4-compatible'],
  ['64:ff9b::a00:1', 'NAT64 of a private address'],
  ['64:ff9b:1::808:808', 'local-use NAT64, whatever it embeds'],
  ['2002:7f00:1::1', '6to4 of loopback'],
  ['2002:a9fe:a9fe::', '6to4 of the metadata service'],
  ['2001::1', 'Teredo'],
  ['2001:db8::1', 'documentation'],
  ['fc00::1', 'unique local'],
  ['fd12:3456::1', 'unique local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['not an address', 'garbage'],
];

describe('public addresses only (contract §10.1 F)', () => {
  test.each(publicAddresses)('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  test.each(blocked)('%s is refused (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});
