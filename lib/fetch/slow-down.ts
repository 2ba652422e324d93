/**
 * An origin's "slow down", heard: a host that answered 429 or 503 with `Retry-After` (seconds or an
 * HTTP date) is not asked again until then, capped by
 * LINKPREVIEW_RETRY_AFTER_MAX_MS (10 minutes by default; 0 forgets at once). Until then every fetch
 * of the host (the link, its images, icons, oEmbed) fails at once as RATE_LIMITED, with the status
 * seen and the seconds left (`retryAfter` in the record), unless the host rules send it through the
 * operator's proxy. A 429 or 503 without `Retry-After` says no time: it is not remembered (an image
 * or a page that answered so is asked again on its next preview).
 *
 * One memory per process (the local server, one Lambda instance); a fleet-wide one is the next
 * step (docs/deploy-aws.md).
 */

/** Hosts remembered at once (the oldest goes first). */
const MAX_HOSTS = 10_000;

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface SlowedDown {
  /** The status the host answered with (429, 503). */
  status: number;
  /** Epoch ms until which it is not asked. */
  until: number;
}

export class SlowDownMemo {
  private readonly hosts = new Map<string, SlowedDown>();

  constructor(
    readonly maxMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes in an answer of `host`: remembers it when it asks to slow down. */
  heard(host: string, status: number, retryAfter: string | string[] | undefined): void {
    if (this.maxMs <= 0 || (status !== 429 && status !== 503)) return;
    const now = this.now();
    const asked = retryAfterMs(retryAfter, now);
    if (!asked) return;
    const until = now + Math.min(asked, this.maxMs);
    this.hosts.delete(host);
    if (this.hosts.size >= MAX_HOSTS) this.hosts.delete(this.hosts.keys().next().value as string);
    this.hosts.set(host, { status, until });
  }

  /** What `host` asked, while it holds; undefined once its time has passed. */
  held(host: string): SlowedDown | undefined {
    const seen = this.hosts.get(host);
    if (!seen) return undefined;
    if (seen.until > this.now()) return seen;
    this.hosts.delete(host);
    return undefined;
  }

  /** Whole seconds left of a hold (at least 1). */
  secondsLeft(seen: SlowedDown): number {
    return Math.max(1, Math.ceil((seen.until - this.now()) / 1000));
  }
}
