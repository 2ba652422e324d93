/**
 * What Instagram's post and user readers share: its hosts, the login redirect (never a preview
 * titled "Login • Instagram"), Instagram's icon and the user's object id.
 */

import { hostOf } from '../../host.js';
import { platformObjectId } from '../shared/ids.js';
import type { ParsedPage } from '../shared/page.js';

export const HOSTS = /^(www\.|m\.)?instagram\.com$/i;

export const ICONS = [{ url: 'https://static.cdninstagram.com/rsrc.php/v3/yI/r/VsNE-OHk_8a.png' }];

export function isLoginTitle(page: ParsedPage): boolean {
  return [page.data.title, page.meta('og:title')].some((t) => !!t && /^(Login|Log in|Anmelden|Connexion|Iniciar sesión) • Instagram$/i.test(t.trim()));
}

export function isLoginUrl(u: string): boolean {
  try {
    const x = new URL(u);
    return HOSTS.test(hostOf(x)) && /^\/accounts\/login/.test(x.pathname);
  } catch {
    return false;
  }
}

export function userId(username: string): number {
  return platformObjectId('photoshare', 'user', username.toLowerCase());
}
