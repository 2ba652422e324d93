/**
 * multipart/form-data request bodies: fields only (the request has no file inputs), with
 * limits, parsed by busboy. Replaces @middy/http-multipart-body-parser, whose field callback can
 * throw outside its promise (a `name[]` field after `name` crashed the process in fuzzing).
 */
import Busboy from '@fastify/busboy';
import { BadRequestError } from '../errors.js';

const MULTIPART_LIMITS = { fields: 20, fieldSize: 16 * 1024, files: 0, parts: 25, fieldNameSize: 100 };

export function parseMultipart(body: Buffer, contentType: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    let failed = false;
    const fail = (message: string) => {
      if (failed) return;
      failed = true;
      reject(new BadRequestError('BODY_INVALID', message));
    };
    let parser: Busboy;
    try {
      parser = new Busboy({ headers: { 'content-type': contentType }, limits: MULTIPART_LIMITS });
    } catch (err) {
      fail(`The multipart body could not be read: ${(err as Error).message}.`);
      return;
    }
    parser.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (valueTruncated) {
        fail(`The multipart field "${name.slice(0, 50)}" is longer than ${MULTIPART_LIMITS.fieldSize} bytes.`);
        return;
      }
      const key = name.endsWith('[]') ? name.slice(0, -2) : name;
      if (!(key in fields)) fields[key] = value; // the first value of a repeated field wins
    });
    parser.on('file', (_name: string, stream: NodeJS.ReadableStream) => {
      stream.resume();
    });
    parser.on('fieldsLimit', () => fail(`At most ${MULTIPART_LIMITS.fields} multipart fields are accepted.`));
    parser.on('partsLimit', () => fail(`At most ${MULTIPART_LIMITS.parts} multipart parts are accepted.`));
    parser.on('error', (err: Error) => fail(`The multipart body is malformed: ${err.message}.`));
    parser.on('finish', () => {
      if (!failed) resolve(fields);
    });
    try {
      parser.end(body);
    } catch (err) {
      fail(`The multipart body is malformed: ${(err as Error).message}.`);
    }
  });
}
