/**
 * The typed client through Lambda Invoke (for other Lambdas in the same account): the payload is
 * the request body and the result is the Link record itself. The caller needs
 * lambda:InvokeFunction on the preview function. This entry point of the client is the one place
 * in lib/ outside lib/adapters/aws that imports an AWS SDK; the service never imports it.
 */
import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import type { LinkRecord } from '../contract/link.js';
import { isErrorBody, type LinkPreviewClient, LinkPreviewClientError, type PreviewOptions } from './index.js';

export interface LambdaClientOptions {
  /** Name or ARN of the preview function (a stack output). */
  functionName: string;
  lambda?: Pick<LambdaClient, 'send'>;
}

export function createLambdaClient(options: LambdaClientOptions): LinkPreviewClient {
  const lambda = options.lambda ?? new LambdaClient({});
  return {
    async preview(link: string, opts: PreviewOptions = {}): Promise<LinkRecord> {
      let out: InvokeCommandOutput;
      try {
        out = await lambda.send(
          new InvokeCommand({ FunctionName: options.functionName, Payload: new TextEncoder().encode(JSON.stringify({ link, source: opts.source ?? 'API' })) }),
          { abortSignal: opts.signal },
        );
      } catch (err) {
        throw new LinkPreviewClientError({ status: 0, message: `Could not invoke ${options.functionName}: ${(err as Error).message}` }, { cause: err });
      }
      const text = out.Payload ? new TextDecoder().decode(out.Payload) : '';
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (out.FunctionError) {
        throw new LinkPreviewClientError({
          status: 500,
          errorCode: 'FUNCTION_ERROR',
          message: `${out.FunctionError}: ${(body as { errorMessage?: string })?.errorMessage ?? text.slice(0, 200)}`,
        });
      }
      if (isErrorBody(body)) throw new LinkPreviewClientError(body);
      if (!body || typeof body !== 'object')
        throw new LinkPreviewClientError({ status: 500, errorCode: 'INVALID_RESPONSE', message: 'The function returned no Link record.' });
      return body as LinkRecord;
    },
  };
}
