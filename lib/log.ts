/**
 * The logging port: the few methods the service uses. Powertools' Logger satisfies it in the
 * Lambdas; `createConsoleLogger` writes JSON lines locally. Callers never pass secrets: request
 * headers are never logged.
 */
export interface Log {
  debug(message: string, extra?: Record<string, unknown>): void;
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;

export function createConsoleLogger(level: LogLevel = 'info', stream: NodeJS.WritableStream = process.stderr): Log {
  const min = LEVELS[level];
  const write = (lvl: Exclude<LogLevel, 'silent'>) => (message: string, extra?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    stream.write(`${JSON.stringify({ level: lvl.toUpperCase(), timestamp: new Date().toISOString(), message, ...extra })}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

export function errorFields(err: unknown): Record<string, unknown> {
  const e = err as Error;
  return { error: { name: e?.name, message: e?.message, stack: e?.stack } };
}
