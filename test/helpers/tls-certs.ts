/**
 * Throwaway certificates for loopback TLS servers in tests, made with the openssl CLI: a CA
 * (self-signed, itself valid for the names given) and a server certificate it signs for them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestCertificates {
  /** The CA's certificate: what a client must trust; with caKey, also a self-signed server certificate. */
  ca: Buffer;
  caKey: Buffer;
  /** The server certificate the CA signed, and its key. */
  cert: Buffer;
  key: Buffer;
}

/** Host names and IP addresses (`a.test`, `127.0.0.1`) the certificates are valid for. */
export function makeTestCertificates(names: string[]): TestCertificates {
  const dir = mkdtempSync(path.join(tmpdir(), 'tls-'));
  const file = (name: string) => path.join(dir, name);
  const san = `subjectAltName=${names.map((n) => (isIP(n) ? `IP:${n}` : `DNS:${n}`)).join(',')}`;
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    openssl('req', '-x509', ...newKey, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '1', '-subj', '/CN=linklens test CA', '-addext', san);
    openssl('req', ...newKey, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', `/CN=${names[0]}`);
    writeFileSync(file('server.ext'), `${san}\n`);
    openssl(
      'x509',
      '-req',
      '-in',
      file('server.csr'),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      file('server.ext'),
      '-out',
      file('server.pem'),
    );
    return {
      ca: readFileSync(file('ca.pem')),
      caKey: readFileSync(file('ca.key')),
      cert: readFileSync(file('server.pem')),
      key: readFileSync(file('server.key')),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
