/**
 * The ids of the platforms' record objects: a stable hash of the platform, the object kind and
 * the platform's own id.
 */
import { stableId } from '../../ids.js';

/** The id of a platform object: the stable 53-bit hash of `<platform>:<kind>:<the platform's own id>`. */
export function platformObjectId(platform: string, kind: string, ownId: string | number): number {
  return stableId(`${platform}:${kind}:${ownId}`);
}
