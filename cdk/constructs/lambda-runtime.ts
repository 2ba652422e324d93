import * as lambda from 'aws-cdk-lib/aws-lambda';

/**
 * The Lambda runtime of every linklens function and layer: Node.js 24, the Active LTS. The
 * handlers are async (nodejs24.x refuses callback-style handlers), and the bundles are built for
 * its major (bundling.ts). The deploy rehearsal runs them on the same major (test/rehearsal).
 */
export const LAMBDA_RUNTIME = lambda.Runtime.NODEJS_24_X;

/** The Node major of a Lambda runtime identifier ("nodejs24.x" → 24), or undefined for another language. */
export function runtimeNodeMajor(runtime: string): number | undefined {
  const m = /^nodejs(\d+)\.x$/.exec(runtime);
  return m ? Number(m[1]) : undefined;
}

/** The Node major of LAMBDA_RUNTIME (24). */
export const LAMBDA_NODE_MAJOR = runtimeNodeMajor(LAMBDA_RUNTIME.name) as number;
