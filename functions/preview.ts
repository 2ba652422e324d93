/**
 * The preview Lambda: API Gateway (REST v1 or HTTP API v2) and direct invocation by other
 * Lambdas. A thin entry: configuration and adapters are built once per container.
 */
import { loadConfig } from '../lib/config.js';
import { createPreviewHandler } from '../lib/http/preview-handler.js';
import { createConsoleLogger } from '../lib/log.js';
import { buildLocalDeps } from './wiring.js';

const config = loadConfig(process.env);
const log = createConsoleLogger(config.logLevel, process.stdout);

export const handler = createPreviewHandler(
  buildLocalDeps({ config: { ...config, dataDir: process.env.LINKPREVIEW_DATA_DIR ?? '/tmp/linklens' }, log, baseUrl: () => config.publicUrl }),
);
