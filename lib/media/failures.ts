/**
 * How the media jobs (video, audio, document) fail: a media link that cannot be described is a
 * `{reason}` result, not a thrown error (it is left out of the record, and on AWS a deterministic
 * failure must not be retried). Any expected failure on the way (a fetch, a decoder, the guard)
 * is such a reason; anything else that escapes a job is a bug.
 */
import { ExpectedFailure } from '../errors.js';

/** A media link that cannot be described (the job turns it into a `{reason}` result). */
export class MediaRejected extends ExpectedFailure {}
