/**
 * The time budget of one preview request. Every phase draws from it: the platform lookup, the
 * fetch of the link and its redirects, a short link's second resolution, the generic fallback,
 * the sub-fetches (oEmbed, manifest) and the job wait. Each phase keeps its own timeout, and uses
 * `min(its own timeout, what is left)`; when the budget ends, its signal aborts whatever is still
 * in flight and the record built so far goes out (lib/preview/preview-link.ts).
 *
 * The deadline is `min(start + budgetMs, start + remainingMs - marginMs)`: `budgetMs` is
 * LINKPREVIEW_REQUEST_BUDGET_MS, `remainingMs` the Lambda's `getRemainingTimeInMillis()` (the local
 * server passes the API Gateway limit), so the response leaves before the function times out.
 */

import { FetchFailure } from './fetch/fetch-failure.js';
import type { Fetcher } from './fetch/types.js';

/** Kept free at the end of an invocation for assembling and returning the record. */
export const BUDGET_MARGIN_MS = 1500;

export interface BudgetStart {
  /** The configured budget (LINKPREVIEW_REQUEST_BUDGET_MS). */
  budgetMs: number;
  /** What is left of the invocation (`context.getRemainingTimeInMillis()`), when known. */
  remainingMs?: number;
  marginMs?: number;
  now?: number;
}

/** The reason the budget's signal aborts with: got reports a `TimeoutError` reason as a timeout. */
function budgetOver(): Error {
  return new DOMException('The time budget of the request ran out.', 'TimeoutError');
}

export class TimeBudget {
  /** Aborted (with a TimeoutError) when the budget ends, or when `end()` is called. */
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private unlink: (() => void) | undefined;

  /** `deadline` is epoch ms; a slice (see `slice`) also ends with its parent. */
  constructor(
    readonly deadline: number,
    parent?: TimeBudget,
  ) {
    this.signal = this.controller.signal;
    const left = deadline - Date.now();
    if (left <= 0) {
      this.controller.abort(budgetOver());
    } else {
      this.timer = setTimeout(() => this.controller.abort(budgetOver()), left);
      this.timer.unref?.();
    }
    if (parent && !this.signal.aborted) {
      if (parent.signal.aborted) this.controller.abort(parent.signal.reason);
      else {
        const follow = () => this.controller.abort(parent.signal.reason);
        parent.signal.addEventListener('abort', follow, { once: true });
        this.unlink = () => parent.signal.removeEventListener('abort', follow);
      }
    }
  }

  /** The request's budget: the configured one, cut to the invocation's remaining time less the margin. */
  static start({ budgetMs, remainingMs, marginMs = BUDGET_MARGIN_MS, now = Date.now() }: BudgetStart): TimeBudget {
    let deadline = now + budgetMs;
    if (typeof remainingMs === 'number' && Number.isFinite(remainingMs)) deadline = Math.min(deadline, now + remainingMs - marginMs);
    return new TimeBudget(deadline);
  }

  /** Milliseconds left (0 when over). */
  remaining(now = Date.now()): number {
    return Math.max(0, this.deadline - now);
  }

  get expired(): boolean {
    return this.signal.aborted || this.remaining() <= 0;
  }

  /** A phase's own timeout, cut to what is left. */
  cap(ms: number): number {
    return Math.min(ms, this.remaining());
  }

  /** The earlier of a phase's own deadline (epoch ms) and the budget's. */
  until(deadline: number): number {
    return Math.min(deadline, this.deadline);
  }

  /**
   * A part of what is left (`share` of it) for a phase that must leave time to the phases after
   * it (a platform's sources, before the generic fallback). It ends at its own deadline or with this budget.
   */
  slice(share: number): TimeBudget {
    return new TimeBudget(Date.now() + Math.floor(this.remaining() * share), this);
  }

  /** Stops the timer; anything still in flight under this budget is aborted. */
  end(): void {
    clearTimeout(this.timer);
    this.unlink?.();
    if (!this.signal.aborted) this.controller.abort(new DOMException('The request is over.', 'AbortError'));
  }
}

/**
 * The fetcher a phase uses under a budget: each fetch's own timeout is cut to what is left, and it
 * is aborted (as a TIMEOUT) when the budget ends. After the end, a fetch fails at once.
 */
export function budgetedFetcher(fetch: Fetcher, budget: TimeBudget): Fetcher {
  return async (url, options) => {
    const timeoutMs = budget.cap(options.timeoutMs);
    if (budget.expired || timeoutMs <= 0) throw new FetchFailure('TIMEOUT', 'The time budget of the request ran out.', { trail: [url] });
    const signal = options.signal ? AbortSignal.any([options.signal, budget.signal]) : budget.signal;
    return fetch(url, { ...options, timeoutMs, signal });
  };
}

/**
 * The invocation budget of a Lambda: the time budget of the current preview invocation, the
 * earlier of start + LINKPREVIEW_REQUEST_BUDGET_MS and the Lambda's own remaining time less a
 * margin for assembling and returning the record. `start` makes the request's one TimeBudget
 * (the preview handler's `startBudget`: every phase draws from it); `deadline` gives its end to
 * the SQS runner as a hard cap on the job wait.
 */
export class InvocationBudget {
  private current: TimeBudget | undefined;

  constructor(
    private readonly budgetMs: number,
    private readonly marginMs = BUDGET_MARGIN_MS,
  ) {}

  start(context?: { getRemainingTimeInMillis?: () => number }, now = Date.now()): TimeBudget {
    const remaining = typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined;
    this.current?.end();
    this.current = TimeBudget.start({ budgetMs: this.budgetMs, remainingMs: remaining, marginMs: this.marginMs, now });
    return this.current;
  }

  deadline = (): number | undefined => this.current?.deadline;
}
