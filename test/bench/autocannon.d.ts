// autocannon ships no types; the bench uses a small part of it.
declare module 'autocannon' {
  namespace autocannon {
    interface Result {
      requests: { average: number };
      errors: number;
      timeouts: number;
    }
  }
  function autocannon(
    options: Record<string, unknown>,
    cb: (err: Error | null, res: autocannon.Result) => void,
  ): NodeJS.EventEmitter & { on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void };
  export = autocannon;
}
