/**
 * Etsy: listings `/listing/{id}` on etsy.com (also `/{locale}/listing/{id}` and the country
 * hosts). `productId` is the listing id. Platform name `marketplace`: it fills the contract's
 * MARKETPLACE_PRODUCT (`marketplaceProduct`), read by ./listing.ts.
 */

import { hostOf } from '../../host.js';
import type { Platform, PlatformMatch } from '../types.js';
import { extractListing } from './listing.js';

const HOSTS = /^(?:www\.|m\.)?etsy\.(com|de|fr|it|es|nl|pl|ca|co\.uk|com\.au|ie|ch|at|be|se|dk|fi|no|pt|in|jp|co\.nz)$/i;

export function matchEtsy(url: URL): PlatformMatch | undefined {
  if (!HOSTS.test(hostOf(url))) return undefined;
  const m = /^\/(?:[a-z]{2}(?:-[a-z]{2})?\/)?listing\/(\d{4,15})(?:\/|$)/i.exec(url.pathname);
  return m ? { kind: 'product', ids: { productId: m[1] } } : undefined;
}

export const etsy: Platform = {
  name: 'marketplace',
  siteName: 'Etsy',
  match: matchEtsy,
  async extract(url, match, ctx) {
    return extractListing(url, match.ids.productId, ctx);
  },
};
