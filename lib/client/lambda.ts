/**
 * The typed client through Lambda Invoke (`@linklens/client/lambda`, for other Lambdas in the same
 * account): the payload is the request body and the result is the Link record itself. The caller
 * needs lambda:InvokeFunction on the preview function.
 *
 * @aws-sdk/client-lambda is an optional peer of the package: it is loaded (a dynamic import) at
 * the first preview, and only when no `invoke` function is given. This entry point of the client
 * is the one place in lib/ outside lib/adapters/aws that loads an AWS SDK; the service never
 * loads it.
 */
import type { LinkRecord } from '../contract/link.js';
import { isErrorBody, type LinkPreviewClient, LinkPreviewClientError, type PreviewOptions } from './index.js';

/** What the client sends: the fields of an InvokeCommand's input that it sets. */
export interface InvokeRequest {
  FunctionName: string;
  Payload: Uint8Array;
}

/** What the client reads of the answer: the fields of an InvokeCommand's output. */
export interface InvokeResult {
  Payload?: Uint8Array;
  FunctionError?: string;
}

/** One synchronous invocation (RequestResponse), as @aws-sdk/client-lambda's `send(new InvokeCommand(request))` does it. */
export type InvokeFunction = (request: InvokeRequest, options: { abortSignal?: AbortSignal }) => Promise<InvokeResult>;

/** A LambdaClient of @aws-sdk/client-lambda, as far as the client uses it (typed loosely: the package's types do not name the SDK's). */
export interface LambdaSender {
  send(command: never, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
}

export interface LambdaClientOptions {
  /** Name or ARN of the preview function (a stack output). */
  functionName: string;
  /** Your LambdaClient (its region, credentials, retries); by default `new LambdaClient({})`. */
  lambda?: LambdaSender;
  /** The invocation itself, instead of the SDK (a test, another transport): nothing is loaded. */
  invoke?: InvokeFunction;
}

/** The invocation through @aws-sdk/client-lambda, loaded now; an SDK that cannot be loaded is said plainly. */
async function sdkInvoke(lambda: LambdaSender | undefined): Promise<InvokeFunction> {
  let sdk: typeof import('@aws-sdk/client-lambda');
  try {
    sdk = await import('@aws-sdk/client-lambda');
  } catch (err) {
    throw new Error(`@aws-sdk/client-lambda could not be loaded (npm install @aws-sdk/client-lambda, or pass \`invoke\`): ${(err as Error).message}`, {
      cause: err,
    });
  }
  const client: LambdaSender = lambda ?? new sdk.LambdaClient({});
  return async (request, options) => (await client.send(new sdk.InvokeCommand(request) as never, options)) as InvokeResult;
}

export function createLambdaClient(options: LambdaClientOptions): LinkPreviewClient {
  // The SDK's invocation, loaded at the first preview that needs it.
  let loaded: Promise<InvokeFunction> | undefined;
  const invoker = (): Promise<InvokeFunction> => {
    if (options.invoke) return Promise.resolve(options.invoke);
    loaded ??= sdkInvoke(options.lambda);
    return loaded;
  };
  return {
    async preview(link: string, opts: PreviewOptions = {}): Promise<LinkRecord> {
      let out: InvokeResult;
      try {
        const invoke = await invoker();
        out = await invoke(
          { FunctionName: options.functionName, Payload: new TextEncoder().encode(JSON.stringify({ link, source: opts.source ?? 'API' })) },
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
