/**
 * Amazon, every country store: amazon.com, .co.uk, .de, .fr, .es, .it, .co.jp, .ca, .com.mx,
 * .com.br, .in, .com.au, ... amzn.to, a.co, amzn.eu and amzn.asia short links arrive here after
 * the generic fetch followed their redirects. Platform name `retailer`: it fills the contract's
 * RETAILER_PRODUCT (`retailerProduct`), read by ./product.ts.
 *
 * `productId` is the ASIN (`/dp/{ASIN}`, `/gp/product/{ASIN}`, `/gp/aw/d/{ASIN}`, `/exec/obidos/ASIN/{ASIN}`).
 */

import { hostOf } from '../../host.js';
import type { Platform, PlatformMatch } from '../types.js';
import { extractProduct } from './product.js';

const HOSTS =
  /^(?:www\.|smile\.|m\.)?amazon\.(com|ca|com\.mx|com\.br|co\.uk|de|fr|it|es|nl|com\.be|ie|se|pl|com\.tr|ae|sa|eg|in|co\.jp|cn|com\.au|sg|co\.za|com\.ng)$/i;
const ASIN = /(?:\/dp\/|\/gp\/product\/|\/gp\/aw\/d\/|\/exec\/obidos\/(?:ASIN|tg\/detail\/-)\/|\/o\/ASIN\/|\/gp\/offer-listing\/)([A-Z0-9]{10})(?:[/?#]|$)/i;

export function matchAmazon(url: URL): PlatformMatch | undefined {
  if (!HOSTS.test(hostOf(url))) return undefined;
  const m = ASIN.exec(url.pathname);
  return m ? { kind: 'product', ids: { productId: m[1].toUpperCase() } } : undefined;
}

export const amazon: Platform = {
  name: 'retailer',
  siteName: 'Amazon',
  match: matchAmazon,
  async extract(url, match, ctx) {
    return extractProduct(url, match.ids.productId, ctx);
  },
};
