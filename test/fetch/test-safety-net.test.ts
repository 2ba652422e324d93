/** The Jest setup refuses every non-loopback connection, so a broken guard cannot send traffic off the machine. */
import http from 'node:http';
import net from 'node:net';

test('a socket to a private or public IP is refused before any packet is sent', async () => {
  for (const host of ['10.1.2.3', '169.254.169.254', '93.184.216.34', '::ffff:a9fe:a9fe']) {
    const err = await new Promise<NodeJS.ErrnoException>((resolve) => {
      const s = net.connect({ host, port: 80 });
      s.on('error', resolve);
      s.on('connect', () => resolve(Object.assign(new Error('connected'), { code: 'CONNECTED' })));
    });
    expect(err.code).toBe('EBLOCKEDBYTEST');
  }
});

test('a name that resolves off-machine is refused after DNS', async () => {
  const err = await new Promise<NodeJS.ErrnoException>((resolve) => {
    const req = http.get({
      host: 'evil.test',
      port: 80,
      lookup: ((_h: string, _o: unknown, cb: (e: null, a: string, f: number) => void) => cb(null, '10.0.0.1', 4)) as never,
    });
    req.on('error', resolve);
  });
  expect(err.code).toBe('EBLOCKEDBYTEST');
});

test('loopback still works', async () => {
  const server = net.createServer((s) => s.end('hi'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const data = await new Promise<string>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let buf = '';
    s.on('data', (d) => (buf += d));
    s.on('end', () => resolve(buf));
    s.on('error', reject);
  });
  server.close();
  expect(data).toBe('hi');
});
