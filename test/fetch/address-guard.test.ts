/**
 * The SSRF guard as pure classification: no connection is made in this file. Hostnames are
 * given as a WHATWG URL parses them, which is what the fetcher checks.
 */
import { checkUrl, classifyAddress, type GuardPolicy, guardedLookup, openGuardWarning } from '../../lib/fetch/address-guard';

const closed: GuardPolicy = { allowPrivateNetworks: false, allowedPorts: [] };

describe('classifyAddress', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['100.64.0.1', 'carrier-grade-nat'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'this-network'],
    ['0.1.2.3', 'this-network'],
    ['192.0.0.170', 'ietf-protocol'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00::1', 'unique-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback (ipv4-mapped)'],
    ['::ffff:7f00:1', 'loopback (ipv4-mapped)'],
    ['::ffff:169.254.169.254', 'metadata (ipv4-mapped)'],
    ['::ffff:10.0.0.1', 'private (ipv4-mapped)'],
    ['::a00:1', 'ipv4-compatible'],
    ['::808:808', 'ipv4-compatible'],
    ['64:ff9b::7f00:1', 'loopback (nat64)'],
    ['64:ff9b::a9fe:a9fe', 'metadata (nat64)'],
    ['64:ff9b:1::a00:1', 'nat64-local'],
    ['2002:7f00:1::', 'loopback (6to4)'],
    ['2002:a9fe:a9fe::1', 'metadata (6to4)'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    ['2001:db8::1', 'documentation'],
    ['fe80::1%eth0', 'link-local'],
    ['not-an-ip', 'not-an-ip-address'],
  ])('%s is forbidden (%s)', (ip, reason) => {
    expect(classifyAddress(ip)).toEqual({ allowed: false, reason });
  });

  test.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (ip) => {
    expect(classifyAddress(ip)).toEqual({ allowed: true });
  });

  test('::127.0.0.1 (v4-compatible text form) is refused', () => {
    expect(classifyAddress('::127.0.0.1').allowed).toBe(false);
  });

  test('trusted addresses are exact and code-only', () => {
    expect(classifyAddress('127.0.0.1', { trustedAddresses: ['127.0.0.1'] })).toEqual({ allowed: true });
    expect(classifyAddress('127.0.0.2', { trustedAddresses: ['127.0.0.1'] }).allowed).toBe(false);
  });
});

describe('checkUrl (what the fetcher checks before any connection, on every hop)', () => {
  test.each([
    ['http://127.0.0.1/', 'loopback'],
    ['http://2130706433/', 'loopback'], // decimal
    ['http://0x7f000001/', 'loopback'], // hex
    ['http://0x7f.0.0.1/', 'loopback'], // dotted hex
    ['http://0177.0.0.1/', 'loopback'], // octal
    ['http://017700000001/', 'loopback'], // octal whole
    ['http://127.1/', 'loopback'], // short form
    ['http://[::1]/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[0:0:0:0:0:ffff:7f00:1]/', 'loopback'],
    ['http://0.0.0.0/', 'this-network'],
    ['http://0/', 'this-network'],
    ['http://169.254.169.254/latest/meta-data/', 'metadata'],
    ['http://0xa9fea9fe/', 'metadata'],
    ['http://2852039166/', 'metadata'],
    ['http://[fd00:ec2::254]/', 'metadata'],
    ['http://10.0.0.1/', 'private'],
    ['http://012.0.0.1/', 'private'],
    ['http://public@127.0.0.1/', 'loopback'], // userinfo does not change the host
  ])('%s is refused (%s)', (link, reason) => {
    const verdict = checkUrl(new URL(link), closed);
    expect(verdict.allowed).toBe(false);
    expect(verdict.allowed ? '' : verdict.reason).toContain(reason);
  });

  test.each(['http://localhost/', 'http://localhost./', 'http://LOCALHOST/', 'http://foo.localhost/', 'http://ip6-localhost/'])(
    '%s is refused as a local name',
    (link) => {
      const verdict = checkUrl(new URL(link), closed);
      expect(verdict).toEqual({ allowed: false, reason: expect.stringContaining('local name') });
    },
  );

  test.each(['ftp://example.com/', 'file:///etc/passwd', 'gopher://example.com/', 'data:text/html,hi', 'javascript:alert(1)'])(
    '%s: only http and https',
    (link) => {
      const verdict = checkUrl(new URL(link), closed);
      expect(verdict).toEqual({ allowed: false, reason: expect.stringMatching(/^scheme .* is not allowed$/) });
    },
  );

  test('only ports 80 and 443 unless configured', () => {
    expect(checkUrl(new URL('http://example.com:8080/'), closed)).toEqual({ allowed: false, reason: 'port 8080 is not allowed' });
    expect(checkUrl(new URL('https://example.com:22/'), closed).allowed).toBe(false);
    expect(checkUrl(new URL('http://example.com:8080/'), { ...closed, allowedPorts: [8080] })).toEqual({ allowed: true });
    expect(checkUrl(new URL('https://example.com/'), closed)).toEqual({ allowed: true });
    expect(checkUrl(new URL('http://example.com:80/'), closed)).toEqual({ allowed: true });
  });

  test('an IDN homograph of localhost is not a local name; it goes to DNS, where the address check applies', () => {
    const u = new URL('http://ⓛocalhost/');
    // WHATWG URL maps this homograph to plain "localhost", which is refused.
    expect(u.hostname).toBe('localhost');
    expect(checkUrl(u, closed).allowed).toBe(false);
    const cyrillic = new URL('http://lоcalhost/'); // Cyrillic "о": punycode, resolved by DNS
    expect(cyrillic.hostname.startsWith('xn--')).toBe(true);
    expect(checkUrl(cyrillic, closed)).toEqual({ allowed: true });
  });

  test('the open policy (LINKPREVIEW_ALLOW_PRIVATE_NETWORKS) lifts the address and port checks but not the scheme check', () => {
    const open: GuardPolicy = { allowPrivateNetworks: true, allowedPorts: [] };
    expect(checkUrl(new URL('http://127.0.0.1:3000/'), open)).toEqual({ allowed: true });
    expect(checkUrl(new URL('file:///etc/passwd'), open).allowed).toBe(false);
  });
});

describe('guardedLookup (the connect-time check of every resolved address)', () => {
  const lookupWith = (addresses: string[], policy = closed) =>
    guardedLookup(policy, async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  const run = (lookup: ReturnType<typeof lookupWith>, options: object) =>
    new Promise<{ err: any; address: unknown; family?: number }>((resolve) => {
      (lookup as any)('host.test', options, (err: unknown, address: unknown, family?: number) => resolve({ err, address, family }));
    });

  test('a name resolving to loopback is refused', async () => {
    const { err } = await run(lookupWith(['127.0.0.1']), {});
    expect(err.code).toBe('ELINKNOTALLOWED');
    expect(err.reason).toBe('loopback');
  });

  test('a mix of public and private addresses is refused as a whole', async () => {
    const { err } = await run(lookupWith(['93.184.216.34', '10.0.0.7']), { all: true });
    expect(err.code).toBe('ELINKNOTALLOWED');
    expect(err.address).toBe('10.0.0.7');
  });

  test('public addresses pass, in the shape asked for (single or all)', async () => {
    const single = await run(lookupWith(['93.184.216.34', '2606:2800:220:1::1']), {});
    expect(single).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    const all = await run(lookupWith(['93.184.216.34', '2606:2800:220:1::1']), { all: true });
    expect(all.address).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
    const v6 = await run(lookupWith(['93.184.216.34', '2606:2800:220:1::1']), { family: 6 });
    expect(v6).toEqual({ err: null, address: '2606:2800:220:1::1', family: 6 });
  });

  test('the metadata service over IPv6 and IPv4-mapped forms is refused', async () => {
    expect((await run(lookupWith(['fd00:ec2::254']), {})).err.code).toBe('ELINKNOTALLOWED');
    expect((await run(lookupWith(['::ffff:169.254.169.254']), {})).err.code).toBe('ELINKNOTALLOWED');
  });

  test('no addresses is a DNS failure', async () => {
    const { err } = await run(lookupWith([]), {});
    expect(err.code).toBe('ENOTFOUND');
  });
});

describe('the open settings never open link-local or cloud metadata addresses', () => {
  const privateNets: GuardPolicy = { allowPrivateNetworks: true, allowedPorts: [] };
  const loopbackOnly: GuardPolicy = { allowPrivateNetworks: false, allowLoopback: true, allowedPorts: [] };

  // Link-local and metadata in every form a URL or a DNS answer can take.
  const neverOpen = [
    '169.254.169.254',
    '169.254.170.2',
    '169.254.0.1',
    '169.254.255.255',
    '100.100.100.200',
    'fd00:ec2::254',
    'fd00:ec2::253',
    'fe80::1',
    'fe80::a9fe:a9fe',
    'fe80::1%eth0',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::ffff:100.100.100.200',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::169.254.169.254',
    '64:ff9b:1::a9fe:a9fe',
    '2002:a9fe:a9fe::1',
    '::169.254.169.254',
    // Never opened either: 0.0.0.0 (reaches this machine), and IPv4 inside NAT64/6to4/compatible forms.
    '0.0.0.0',
    '64:ff9b::7f00:1',
    '2002:7f00:1::',
    '::127.0.0.1',
    '64:ff9b::a00:1',
  ];
  test.each(neverOpen)('%s stays forbidden with ALLOW_PRIVATE_NETWORKS and with ALLOW_LOOPBACK', (ip) => {
    expect(classifyAddress(ip, privateNets).allowed).toBe(false);
    expect(classifyAddress(ip, loopbackOnly).allowed).toBe(false);
    expect(classifyAddress(ip, { ...privateNets, allowLoopback: true }).allowed).toBe(false);
  });

  test.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://169.254.169.254:8080/',
    'http://0xa9fea9fe/',
    'http://2852039166/',
    'http://0251.0376.0251.0376/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[2002:a9fe:a9fe::]/',
    'http://100.100.100.200/latest/meta-data/',
    'http://[fe80::1]/',
    'http://169.254.170.2/v2/credentials',
    'http://0.0.0.0:3000/',
  ])('checkUrl refuses %s under either setting', (link) => {
    expect(checkUrl(new URL(link), privateNets).allowed).toBe(false);
    expect(checkUrl(new URL(link), loopbackOnly).allowed).toBe(false);
  });

  test('ALLOW_PRIVATE_NETWORKS opens loopback, RFC 1918, unique-local and carrier-grade NAT, on any port', () => {
    for (const ip of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.5', '172.16.0.1', '192.168.1.1', '::ffff:192.168.1.1', 'fd12:3456::1', '100.64.0.1']) {
      expect({ ip, verdict: classifyAddress(ip, privateNets) }).toEqual({ ip, verdict: { allowed: true } });
    }
    expect(checkUrl(new URL('http://10.0.0.5:8080/'), privateNets)).toEqual({ allowed: true });
    expect(checkUrl(new URL('http://localhost:3000/'), privateNets)).toEqual({ allowed: true });
  });

  test('ALLOW_LOOPBACK opens loopback alone: 127.0.0.0/8, ::1, localhost, on any port', () => {
    for (const ip of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) expect(classifyAddress(ip, loopbackOnly)).toEqual({ allowed: true });
    for (const ip of ['10.0.0.5', '172.16.0.1', '192.168.1.1', 'fd12:3456::1', '100.64.0.1', '::ffff:10.0.0.1']) {
      expect({ ip, allowed: classifyAddress(ip, loopbackOnly).allowed }).toEqual({ ip, allowed: false });
    }
    for (const link of ['http://127.0.0.1:3000/', 'http://[::1]:8766/x', 'http://localhost:5173/', 'http://127.1:9000/']) {
      expect({ link, verdict: checkUrl(new URL(link), loopbackOnly) }).toEqual({ link, verdict: { allowed: true } });
    }
    // Any port for loopback only: other hosts keep 80, 443 and the configured ports.
    expect(checkUrl(new URL('http://example.com:8080/'), loopbackOnly)).toEqual({ allowed: false, reason: 'port 8080 is not allowed' });
    expect(checkUrl(new URL('http://192.168.1.1:8080/'), loopbackOnly).allowed).toBe(false);
    expect(checkUrl(new URL('http://192.168.1.1/'), loopbackOnly)).toEqual({ allowed: false, reason: 'address 192.168.1.1 is private' });
    expect(checkUrl(new URL('https://example.com/'), loopbackOnly)).toEqual({ allowed: true });
  });

  test('a name resolving to a metadata or link-local address is refused at connect time under either setting', async () => {
    for (const policy of [privateNets, loopbackOnly]) {
      for (const address of ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', 'fe80::1']) {
        const lookup = guardedLookup(policy, async () => [{ address, family: address.includes(':') ? 6 : 4 }]);
        const err = await new Promise<any>((resolve) => (lookup as any)('metadata.test', {}, (e: unknown) => resolve(e)));
        expect({ address, code: err?.code }).toEqual({ address, code: 'ELINKNOTALLOWED' });
      }
    }
    // A mix of loopback and metadata is refused as a whole.
    const mixed = guardedLookup(privateNets, async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ]);
    const err = await new Promise<any>((resolve) => (mixed as any)('mixed.test', {}, (e: unknown) => resolve(e)));
    expect(err.code).toBe('ELINKNOTALLOWED');
  });

  test('the start-up warning names what is open, and nothing when the guard is closed', () => {
    expect(openGuardWarning({ allowPrivateNetworks: false, allowLoopback: false })).toBeUndefined();
    const loop = openGuardWarning({ allowPrivateNetworks: false, allowLoopback: true })!;
    expect(loop).toContain('LINKPREVIEW_ALLOW_LOOPBACK=true');
    expect(loop).toMatch(/127\.0\.0\.0\/8.*::1.*any port/);
    expect(loop).toMatch(/metadata .* stay closed/);
    const priv = openGuardWarning({ allowPrivateNetworks: true })!;
    expect(priv).toContain('LINKPREVIEW_ALLOW_PRIVATE_NETWORKS=true');
    expect(priv).toMatch(/10\.0\.0\.0\/8.*192\.168\.0\.0\/16/);
    expect(priv).toContain('169.254.0.0/16');
    expect(priv).toContain('LINKPREVIEW_ALLOW_LOOPBACK=true opens loopback alone');
  });
});
