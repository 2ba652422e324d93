/**
 * The browser worker Lambda: the same SQS job worker as functions/worker.ts (same handler,
 * idempotency, deadlines and batch failures), fed by its own queue with the jobs that need a
 * headless Chromium (screenshots), and given one.
 * The browser comes from a layer holding @sparticuz/chromium (/opt/nodejs/node_modules): on the
 * first event of a container its binary is unpacked to /tmp and handed to lib/browser with the
 * package's Lambda flags. The package is never loaded outside Lambda (local runs use Debian's
 * chromium or LINKPREVIEW_BROWSER_PATH).
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { configureBrowser } from '../lib/browser/availability.js';
import { loadConfig } from '../lib/config.js';
import { instrumentedWorker } from './worker.js';

/** A variable, so TypeScript does not look for the package's types (it is a devDependency for the layer). */
const BROWSER_MODULE = '@sparticuz/chromium';

interface LambdaChromium {
  args: string[];
  executablePath(input?: string): Promise<string>;
}

/**
 * The layer's browser: unpacked once per container (about a second), then reused. The package is
 * ESM-only, and Lambda runs Node 24 with --no-experimental-require-module: it must be imported.
 */
export async function lambdaBrowser(load: () => Promise<unknown> = () => import(BROWSER_MODULE)): Promise<{ executablePath: string; args: string[] }> {
  const mod = (await load()) as { default?: LambdaChromium } & LambdaChromium;
  const chromium = mod.default ?? mod;
  return { executablePath: await chromium.executablePath(), args: chromium.args };
}

let built: Promise<(event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>> | undefined;

async function build() {
  const browser = await lambdaBrowser();
  configureBrowser(browser);
  return instrumentedWorker('linklens-browser-worker', { ...loadConfig(process.env), browserPath: browser.executablePath });
}

/** The Lambda entry (functions/browser-worker.handler). */
export const handler = async (event: SQSEvent, context: unknown): Promise<SQSBatchResponse> => {
  built ??= build().catch((err) => {
    built = undefined;
    throw err;
  });
  return (await built)(event, context);
};
