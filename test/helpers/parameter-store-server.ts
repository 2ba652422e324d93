/**
 * A small SSM Parameter Store and Secrets Manager on loopback, speaking their wire protocol
 * (AWS JSON 1.1: `POST /` with `X-Amz-Target: AmazonSSM.GetParameter` or
 * `secretsmanager.GetSecretValue`), so the real SDK clients and Powertools' providers run
 * against it with only their endpoint overridden. It counts the reads of each name, and can be
 * made to fail (500) to play an outage.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ParameterType = 'String' | 'StringList' | 'SecureString';

export interface ParameterStoreServer {
  url: string;
  putParameter(name: string, value: string, type?: ParameterType): void;
  putSecret(name: string, value: string): void;
  /** Reads answered (or failed) for a parameter or secret name. */
  reads(name: string): number;
  /** Every request as received: the target, the JSON body and whether it was SigV4-signed. */
  requests: { target: string; body: Record<string, unknown>; signed: boolean }[];
  /** While true every request is answered 500 (an outage). */
  failing: boolean;
  close(): Promise<void>;
}

const ACCOUNT = '000000000000';
const REGION = 'us-east-1';

export async function startParameterStoreServer(): Promise<ParameterStoreServer> {
  const parameters = new Map<string, { value: string; type: ParameterType; version: number }>();
  const secrets = new Map<string, { value: string; version: number }>();
  const reads = new Map<string, number>();
  const requests: ParameterStoreServer['requests'] = [];
  const count = (name: string) => reads.set(name, (reads.get(name) ?? 0) + 1);

  const answer = (res: http.ServerResponse, status: number, body: unknown, errorType?: string) => {
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.1',
      'x-amzn-requestid': `req-${requests.length}`,
      ...(errorType && { 'x-amzn-errortype': errorType }),
    });
    res.end(JSON.stringify(body));
  };

  const self: ParameterStoreServer = {
    url: '',
    failing: false,
    requests,
    putParameter(name, value, type = 'SecureString') {
      parameters.set(name, { value, type, version: (parameters.get(name)?.version ?? 0) + 1 });
    },
    putSecret(name, value) {
      secrets.set(name, { value, version: (secrets.get(name)?.version ?? 0) + 1 });
    },
    reads: (name) => reads.get(name) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        /* answered below */
      }
      requests.push({ target, body, signed: String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 ') });
      if (req.method !== 'POST' || !String(req.headers['content-type'] ?? '').startsWith('application/x-amz-json-1.1')) {
        answer(res, 400, { __type: 'SerializationException', message: 'expected POST with application/x-amz-json-1.1' }, 'SerializationException');
        return;
      }
      if (target === 'AmazonSSM.GetParameter') {
        const name = String(body.Name ?? '');
        count(name);
        if (self.failing) return answer(res, 500, { __type: 'InternalServerError', message: 'outage (test)' }, 'InternalServerError');
        const p = parameters.get(name);
        if (!p) return answer(res, 400, { __type: 'ParameterNotFound', message: `Parameter ${name} not found.` }, 'ParameterNotFound');
        // Without WithDecryption a SecureString's value stays encrypted, as on AWS.
        const value = p.type === 'SecureString' && body.WithDecryption !== true ? Buffer.from(`kms-ciphertext:${p.value}`).toString('base64') : p.value;
        return answer(res, 200, {
          Parameter: {
            Name: name,
            Type: p.type,
            Value: value,
            Version: p.version,
            DataType: 'text',
            LastModifiedDate: Date.now() / 1000,
            ARN: `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter/${name.replace(/^\//, '')}`,
          },
        });
      }
      if (target === 'secretsmanager.GetSecretValue') {
        const id = String(body.SecretId ?? '');
        count(id);
        if (self.failing) return answer(res, 500, { __type: 'InternalServiceError', message: 'outage (test)' }, 'InternalServiceError');
        const s = secrets.get(id);
        if (!s)
          return answer(
            res,
            400,
            { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." },
            'ResourceNotFoundException',
          );
        return answer(res, 200, {
          ARN: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${id}-AbCdEf`,
          Name: id,
          VersionId: `v${s.version}`,
          SecretString: s.value,
          VersionStages: ['AWSCURRENT'],
          CreatedDate: Date.now() / 1000,
        });
      }
      answer(res, 400, { __type: 'UnknownOperationException', message: `not implemented here: ${target}` }, 'UnknownOperationException');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return self;
}
