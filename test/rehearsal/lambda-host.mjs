// One Lambda execution environment of the deploy rehearsal (test/rehearsal/stack-rehearsal.ts),
// run by the Node of the function's runtime (its major) in its own process, with the task directory
// as its working directory and the template's environment. It plays the runtime's part: load the
// handler named by _HANDLER from LAMBDA_TASK_ROOT (index.mjs, .js or .cjs, as the runtime looks
// for them), then run one invocation at a time with a context whose getRemainingTimeInMillis
// counts down to the function's timeout. Invocations arrive over the IPC channel.
//
// Module resolution is the runtime's: NODE_PATH (the layers' /opt/nodejs/node_modules, the
// runtime's AWS SDK, the task root) for require, and the same folders for import, after the
// task's own node_modules (the hook below). This file imports only node: builtins.

import { existsSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// Test-only: no socket to anything but loopback (the same net as the Jest processes).
if (process.env.LINKLENS_REHEARSAL_NET_GUARD) createRequire(import.meta.url)(process.env.LINKLENS_REHEARSAL_NET_GUARD);
delete process.env.LINKLENS_REHEARSAL_NET_GUARD;

register('./esm-layer-resolve.mjs', import.meta.url);

const send = (message) => new Promise((resolve) => process.send(message, resolve));

// nodejs24.x removed callback-style handlers: at init, a handler that declares a third parameter
// (the callback) fails with Runtime.CallbackHandlerDeprecated (the runtime classifies by
// handler.length >= 3: H4ad/serverless-adapter#378; the error as seen in
// open-telemetry/opentelemetry-js-contrib#3251), and the context lost callbackWaitsForEmptyEventLoop,
// succeed, fail and done (AWS blog "Node.js 24 runtime now available in AWS Lambda", 2025-11-25).
const NO_CALLBACKS = Number(process.versions.node.split('.')[0]) >= 24;

function handlerFile(taskRoot, handler) {
  const dot = handler.lastIndexOf('.');
  const base = handler.slice(0, dot);
  for (const ext of ['.js', '.mjs', '.cjs']) {
    const file = path.join(taskRoot, base + ext);
    if (existsSync(file)) return { file, name: handler.slice(dot + 1) };
  }
  throw new Error(`Runtime.ImportModuleError: Cannot find module '${base}' in ${taskRoot}`);
}

const errorOf = (err) => ({
  errorType: err?.name ?? 'Error',
  errorMessage: err?.message ?? String(err),
  stack: String(err?.stack ?? '')
    .split('\n')
    .slice(0, 12),
});

let fn;
const t0 = performance.now();
try {
  const { file, name } = handlerFile(process.env.LAMBDA_TASK_ROOT, process.env._HANDLER);
  const mod = await import(pathToFileURL(file).href);
  fn = mod[name];
  if (typeof fn !== 'function') throw new Error(`Runtime.HandlerNotFound: ${process.env._HANDLER} is undefined or not exported`);
  if (NO_CALLBACKS && fn.length >= 3)
    throw Object.assign(new Error('AWS Lambda has removed support for callback-based function handlers starting with Node.js 24'), {
      name: 'Runtime.CallbackHandlerDeprecated',
    });
  await send({ type: 'ready', initMs: performance.now() - t0, node: process.version });
} catch (err) {
  await send({ type: 'init-error', initMs: performance.now() - t0, error: errorOf(err) });
  process.exit(1);
}

process.on('message', async (msg) => {
  if (msg?.type !== 'invoke') return;
  const started = performance.now();
  process.env._X_AMZN_TRACE_ID = msg.traceId; // as the runtime sets it per invocation (Sampled=0: nothing is sent)
  const context = {
    awsRequestId: msg.id,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION}:000000000000:function:${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    logGroupName: `/aws/lambda/${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    logStreamName: 'rehearsal',
    ...(NO_CALLBACKS ? {} : { callbackWaitsForEmptyEventLoop: true }),
    getRemainingTimeInMillis: () => Math.max(0, msg.deadline - Date.now()),
  };
  try {
    const value = await fn(msg.event, context);
    await send({ type: 'result', id: msg.id, ok: true, value: value === undefined ? null : value, ms: performance.now() - started });
  } catch (err) {
    await send({ type: 'result', id: msg.id, ok: false, error: errorOf(err), ms: performance.now() - started });
  }
});
