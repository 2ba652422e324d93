#!/usr/bin/env node
// `npx linklens <url> [--pretty]`: previews one link in-process with the local defaults, with the
// compiled CLI (dist/cli.js). In a checkout, dist/ is built first when missing or stale; the
// installed package ships it built.
import { existsSync } from 'node:fs';

const build = new URL('../scripts/build.mjs', import.meta.url);
if (existsSync(build)) await (await import(build.href)).ensureBuilt();
const { main } = await import('../dist/cli.js');
const code = await main(process.argv.slice(2));
// Exit now: a browser kept warm for screenshots or pooled sockets would otherwise hold the process open.
process.exit(code);
