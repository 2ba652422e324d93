/**
 * Icon candidates, best first: `<link rel=icon>` / `apple-touch-icon` / `mask-icon` and the web
 * app manifest's icons, ranked by declared size and kind, then `/favicon.ico` when the page
 * declares nothing. The manifest also gives `background_color` (or the page's theme-color).
 */
import type { LinkTag, PageData } from './page-data.js';
import { resolveUrl } from './text.js';

/** An icon source to host; the first that decodes is used. */
export interface IconCandidate {
  url: string;
  /** Declared size (largest side) when the page said, for ranking. */
  size?: number;
  rel?: string;
  type?: string;
}

export interface ManifestData {
  icons: { src: string; sizes?: string; type?: string; purpose?: string }[];
  background_color?: string;
  theme_color?: string;
  /** The app's name and short name (the site's name when the page states none). */
  name?: string;
  short_name?: string;
}

/** Largest side of a `sizes` value: `16x16 32x32` -> 32; `any` (SVG) -> 512. */
function declaredSize(sizes: string | undefined): number | undefined {
  if (!sizes) return undefined;
  if (/\bany\b/i.test(sizes)) return 512;
  let best: number | undefined;
  for (const m of sizes.matchAll(/(\d+)\s*[x×]\s*(\d+)/gi)) {
    const s = Math.max(Number(m[1]), Number(m[2]));
    if (best === undefined || s > best) best = s;
  }
  return best;
}

function sizeFromHref(href: string): number | undefined {
  const m = /(?:^|[^\d])(\d{2,3})x(\d{2,3})(?:[^\d]|$)/.exec(href.split('?')[0]);
  return m ? Math.max(Number(m[1]), Number(m[2])) : undefined;
}

const ICON_RELS = ['icon', 'apple-touch-icon', 'apple-touch-icon-precomposed', 'mask-icon', 'fluid-icon'];

function kindOf(l: LinkTag): string | undefined {
  if (l.rel.includes('apple-touch-icon') || l.rel.includes('apple-touch-icon-precomposed')) return 'apple-touch-icon';
  if (l.rel.includes('mask-icon')) return 'mask-icon';
  if (l.rel.includes('fluid-icon')) return 'fluid-icon';
  if (l.rel.includes('icon')) return 'icon';
  return undefined;
}

/** Default sizes when a page does not declare one: an apple-touch-icon is 180px, a favicon.ico 32px. */
function assumedSize(c: IconCandidate): number {
  if (c.size) return c.size;
  if (c.rel === 'apple-touch-icon') return 180;
  if (c.rel === 'fluid-icon') return 512;
  if (c.type === 'image/svg+xml' || /\.svg(\?|$)/i.test(c.url)) return 256;
  if (/\.ico(\?|$)/i.test(c.url) || c.type === 'image/x-icon' || c.type === 'image/vnd.microsoft.icon') return 32;
  return 64;
}

/** Ranking: bigger first (capped at 512, larger adds nothing), a monochrome mask-icon last. */
function score(c: IconCandidate): number {
  let s = Math.min(assumedSize(c), 512);
  if (c.rel === 'mask-icon') s -= 1000;
  if (c.rel === 'manifest' && c.size && c.size > 256) s -= 1; // same size: the page's own link first
  return s;
}

/**
 * The page's icons, best first: its icon links (resolved against `base`), the web app manifest's
 * icons (`manifest`: its data and the URL its icon sources are relative to), then /favicon.ico of
 * `finalUrl`.
 */
export function iconCandidates(page: Pick<PageData, 'links'>, base: string, finalUrl: string, manifest?: { data: ManifestData; url: string }): IconCandidate[] {
  const out: IconCandidate[] = [];
  const seen = new Set<string>();
  const add = (c: IconCandidate) => {
    if (seen.has(c.url)) return;
    seen.add(c.url);
    out.push(c);
  };
  for (const l of page.links) {
    if (!l.rel.some((r) => ICON_RELS.includes(r))) continue;
    const kind = kindOf(l);
    const url = resolveUrl(l.href, base);
    if (!kind || !url) continue;
    add({ url, size: declaredSize(l.sizes) ?? sizeFromHref(l.href), rel: kind, type: l.type });
  }
  if (manifest) {
    for (const icon of manifest.data.icons.slice(0, 30)) {
      if (!icon || typeof icon.src !== 'string') continue;
      if (icon.purpose && !/\bany\b/.test(icon.purpose) && /\b(maskable|monochrome)\b/.test(icon.purpose)) continue;
      const url = resolveUrl(icon.src, manifest.url);
      if (url) add({ url, size: declaredSize(icon.sizes), rel: 'manifest', type: icon.type });
    }
  }
  // Stable sort: equal scores keep document order.
  const ranked = out
    .map((c, i) => ({ c, i, s: score(c) }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.c);
  const fallback = new URL('/favicon.ico', finalUrl).href;
  if (!seen.has(fallback)) ranked.push({ url: fallback, rel: 'favicon.ico' });
  return ranked;
}

/** The declared manifest URL, if any. */
export function manifestHref(page: PageData, base: string): string | undefined {
  const l = page.links.find((x) => x.rel.includes('manifest'));
  return l ? resolveUrl(l.href, base) : undefined;
}

const COLOR = /^(#[0-9a-f]{3,8}|rgba?\([\d\s.,%]+\)|hsla?\([\d\s.,%deg]+\)|[a-z]{3,20})$/i;

export function parseManifest(text: string): ManifestData | undefined {
  let j: unknown;
  try {
    j = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
  if (!j || typeof j !== 'object') return undefined;
  const o = j as Record<string, unknown>;
  const icons = Array.isArray(o.icons) ? (o.icons as ManifestData['icons']).filter((i) => i && typeof i === 'object') : [];
  const color = (v: unknown) => (typeof v === 'string' && COLOR.test(v.trim()) ? v.trim() : undefined);
  const label = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 200) : undefined);
  return { icons, background_color: color(o.background_color), theme_color: color(o.theme_color), name: label(o.name), short_name: label(o.short_name) };
}

/** The icon background: the manifest's background_color, else the page's theme-color. */
export function backgroundColor(page: PageData, manifest?: ManifestData): string | undefined {
  if (manifest?.background_color) return manifest.background_color;
  const theme = page.metas.find((m) => m.name === 'theme-color' && COLOR.test(m.content.trim()));
  return theme?.content.trim() ?? manifest?.theme_color;
}
