/**
 * How the media jobs (video, audio, document) fail: a media link that cannot be described is a
 * `{reason}` result, not a thrown error (it is left out of the record, and on AWS a deterministic
 * failure must not be retried). Anything else that escapes a job is a bug.
 */
import { LinkPreviewError } from '../errors.js';
import { FetchFailure } from '../fetch/safe-fetch.js';
import { ToolError } from './run-tool.js';

/** A media link that cannot be described (the job turns it into a `{reason}` result). */
export class MediaRejected extends Error {}

export function isMediaFailure(err: unknown): boolean {
  return err instanceof MediaRejected || err instanceof ToolError || err instanceof FetchFailure || err instanceof LinkPreviewError || err instanceof SyntaxError;
}
