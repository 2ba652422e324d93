/**
 * The local server's previews: at most `maxActive` run at once and at most `maxQueued` wait;
 * anything beyond is refused at once with 503 OVERLOADED (and Retry-After), so excess load costs
 * a small error body instead of unbounded memory.
 */
import { LinkPreviewError } from '../errors.js';
import { ConcurrencyGate } from '../jobs/concurrency-gate.js';

export class OverloadedError extends LinkPreviewError {
  constructor(readonly retryAfterSeconds: number) {
    super(503, 'OVERLOADED', 'The service is at capacity. Retry after a short wait.', { transient: true });
  }
}

/** The local server's gate for previews: a full queue is a 503 OVERLOADED. */
export class PreviewGate extends ConcurrencyGate {
  constructor(maxActive: number, maxQueued: number) {
    super(maxActive, maxQueued, () => new OverloadedError(1));
  }
}
