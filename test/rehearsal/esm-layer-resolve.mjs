// The Node.js runtime resolves a bare `import` that the task's own node_modules cannot satisfy
// from the same folders as `require` does through NODE_PATH: the layers' /opt/nodejs/node<major>/node_modules
// and /opt/nodejs/node_modules, then the runtime's node_modules (the AWS SDK). Node's ESM loader
// ignores NODE_PATH, so the rehearsal's hosts get this resolve hook (test/rehearsal/lambda-host.mjs).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const bare = (specifier) => !/^(\.{0,2}\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);
const folders = (process.env.NODE_PATH ?? '').split(path.delimiter).filter(Boolean);

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !bare(specifier)) throw err;
    for (const folder of folders) {
      // A parent module inside the folder: Node then looks in <folder>/node_modules and <folder> itself.
      const parentURL = pathToFileURL(path.join(folder, '__lambda_runtime__.mjs')).href;
      try {
        return await nextResolve(specifier, { ...context, parentURL });
      } catch {
        /* not in this folder */
      }
    }
    throw err;
  }
}
