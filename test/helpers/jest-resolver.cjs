// Jest resolves in CommonJS mode ('require' conditions). Two adjustments:
//  - project sources import './x.js' (ESM style) for files that are './x.ts';
//  - ESM-only packages (file-type, got, htmlparser2, @middy/*, ...) export only under 'import':
//    when the default resolution fails, retry with the ESM conditions. Those packages are
//    compiled to CommonJS by @swc/jest (see transformIgnorePatterns in jest.config.cjs).
const ESM_CONDITIONS = ['import', 'module-sync', 'node', 'default'];

module.exports = (request, options) => {
  try {
    return options.defaultResolver(request, options);
  } catch {
    if (request.startsWith('.') && request.endsWith('.js')) {
      try {
        return options.defaultResolver(`${request.slice(0, -3)}.ts`, options);
      } catch {
        /* fall through */
      }
    }
    return options.defaultResolver(request, { ...options, conditions: ESM_CONDITIONS });
  }
};
