/**
 * One flight per link: previews of the same link that overlap share one pipeline (one page fetch,
 * one fetch per image, one set of jobs). A preview that finds a flight of its key in the air
 * follows it and gets the leader's record with its own `requestId`; nothing older is ever served,
 * since a flight is forgotten the moment it lands (the contract's "every link is fresh": a record
 * comes from a fetch made for this request, or from one in flight when it arrived).
 *
 * - The key is everything that can change the record: the canonical link (no fragment), the
 *   request's options, the caller's language list and the host rule that applies (`flightKey`).
 * - A follower's budget is its own: when it ends before the flight lands, the follower gets what the
 *   leader has built so far, as a lone preview would at its budget's end.
 * - A leader that fails (an error that is not the link's own 4xx) hands over: one follower takes
 *   over as the new leader, the others follow it; after two failed flights a follower flies alone.
 *   A 4xx of the link (LINK_NOT_ALLOWED) is every follower's answer too.
 *
 * In one process (the local server, the CLI). On AWS each preview Lambda instance serves one request
 * at a time, so a herd is spread over instances and this map sees none of it (docs/deploy-aws.md).
 */
import type { PreviewRequest } from '../contract/request.js';
import { LinkPreviewError } from '../errors.js';
import { canonicalUrl } from '../ids.js';
import type { PreviewOutcome, SoFar } from './types.js';

/** `alone`: no other preview of the key was in the air; `leader`: others joined it; `follower`: got the leader's record; `takeover`: flew after a failed leader. */
export type FlightRole = 'alone' | 'leader' | 'follower' | 'takeover';

/** A follower whose budget ends before the flight lands waits this much longer, like the pipeline's own wind-down. */
const FOLLOWER_GRACE_MS = 250;
/** Flights of one key a follower waits on (failed ones) before flying alone. */
const MAX_HANDOVERS = 2;

interface Flight {
  landed: Promise<PreviewOutcome>;
  /** The leader's record so far (its pipeline's SoFar), once the pipeline has one. */
  sofar?: SoFar;
  /** Followers that joined it, and those still waiting on it. */
  followers: number;
  waiting: number;
}

/** What a preview's flight gave: its outcome and the part it played. */
export interface Flown {
  outcome: PreviewOutcome;
  role: FlightRole;
}

/** The key of a preview's flight (see the file's comment). */
export function flightKey(request: PreviewRequest, acceptLanguage: string | undefined, hostRule: string | undefined): string {
  return JSON.stringify([
    canonicalUrl(request.link),
    request.source,
    request.forceNewSnapshot,
    request.forceNewSnapshotRecursive,
    acceptLanguage ?? '',
    hostRule ?? '',
  ]);
}

/** A leader's failure that is every follower's answer too: the link's own 4xx (it would fail the same for them). */
function sharedFailure(err: unknown): boolean {
  return err instanceof LinkPreviewError && err.status < 500;
}

export class Flights {
  private readonly flying = new Map<string, Flight>();

  /** Flights in the air. */
  get size(): number {
    return this.flying.size;
  }

  /** Followers waiting on the flights in the air (what a herd bench or test waits for before it lets the origin answer). */
  get waiting(): number {
    let n = 0;
    for (const f of this.flying.values()) n += f.waiting;
    return n;
  }

  /**
   * The preview of `key`: `fly` runs it as a new flight (its `watch` hands the flight the pipeline's
   * record so far), or it follows the flight in the air. `budgetLeftMs`: the caller's own time left.
   */
  async preview(key: string, budgetLeftMs: () => number, fly: (watch: (sofar: SoFar) => void) => Promise<PreviewOutcome>): Promise<Flown> {
    for (let handovers = 0; ; handovers++) {
      const flight = this.flying.get(key);
      if (!flight || handovers >= MAX_HANDOVERS) {
        const outcome = await this.lead(key, fly, !flight && handovers === 0);
        return { outcome: outcome.value, role: handovers > 0 ? 'takeover' : outcome.followed ? 'leader' : 'alone' };
      }
      flight.followers++;
      flight.waiting++;
      try {
        return { outcome: await follow(flight, budgetLeftMs()), role: 'follower' };
      } catch (err) {
        if (sharedFailure(err)) throw err;
        // The leader failed: take over (or follow whoever took over first).
      } finally {
        flight.waiting--;
      }
    }
  }

  private async lead(
    key: string,
    fly: (watch: (sofar: SoFar) => void) => Promise<PreviewOutcome>,
    register: boolean,
  ): Promise<{ value: PreviewOutcome; followed: boolean }> {
    const flight: Flight = { landed: undefined as unknown as Promise<PreviewOutcome>, followers: 0, waiting: 0 };
    flight.landed = fly((sofar) => {
      flight.sofar = sofar;
    });
    // A failed flight is the followers' to handle; this keeps it from counting as unhandled meanwhile.
    flight.landed.catch(() => undefined);
    if (register || !this.flying.has(key)) this.flying.set(key, flight);
    try {
      return { value: await flight.landed, followed: flight.followers > 0 };
    } finally {
      if (this.flying.get(key) === flight) this.flying.delete(key);
    }
  }
}

/** The flight's outcome, or what it has built when the follower's budget ends first. */
async function follow(flight: Flight, budgetLeftMs: number): Promise<PreviewOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const ownEnd = new Promise<PreviewOutcome | undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, budgetLeftMs) + FOLLOWER_GRACE_MS);
  });
  try {
    const landed = await Promise.race([flight.landed, ownEnd]);
    if (landed) return structuredClone(landed);
    // The pipeline hands its SoFar over before its first await: a flight in the air always has one.
    const { route, ...sofar } = (flight.sofar as SoFar).outcome();
    return { ...structuredClone(sofar), route: { taken: route?.taken ?? 'direct', proxied: 0, walls: [], proxyHosts: [] }, outOfTime: true };
  } finally {
    clearTimeout(timer);
  }
}
