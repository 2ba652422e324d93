// Jest compiles TypeScript with @swc/jest to CommonJS. Several dependencies ship only ESM,
// so they must be transformed too: the list is computed from each package's "type": "module"
// (a hand-written list kept breaking as the packages' versions moved).
const fs = require('node:fs');
const path = require('node:path');

function esmPackages() {
  const root = path.join(__dirname, 'node_modules');
  const names = [];
  const visit = (dir, prefix) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      if (entry.name.startsWith('.')) continue;
      if (entry.name.startsWith('@') && !prefix) {
        visit(path.join(dir, entry.name), `${entry.name}/`);
        continue;
      }
      try {
        const pkg = JSON.parse(fs.readFileSync(path.join(dir, entry.name, 'package.json'), 'utf8'));
        if (pkg.type === 'module') names.push(prefix + entry.name);
      } catch {
        /* not a package */
      }
    }
  };
  visit(root, '');
  return names;
}

const esm = esmPackages().map((n) => n.replace(/[.+]/g, '\\$&'));

module.exports = {
  testEnvironment: 'node',
  resolver: '<rootDir>/test/helpers/jest-resolver.cjs',
  setupFiles: ['<rootDir>/test/helpers/loopback-only.cjs'],
  setupFilesAfterEnv: ['<rootDir>/test/helpers/cpu-pools.ts'],
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j|mj)sx?$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: [`node_modules/(?!(${esm.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  testTimeout: 30000,
  maxWorkers: 2,
};
