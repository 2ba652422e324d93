#!/usr/bin/env node
// `npx linklens <url> [--pretty]`: previews one link in-process with the local defaults.
// The sources are TypeScript; tsx loads them as they are.
import { tsImport } from 'tsx/esm/api';

const { main } = await tsImport('../functions/cli.ts', import.meta.url);
const code = await main(process.argv.slice(2));
// Exit now: a browser kept warm for screenshots or pooled sockets would otherwise hold the process open.
process.exit(code);
