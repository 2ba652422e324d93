/**
 * Single-page app shells that only their script fills in, for the render tests and bench: each
 * loads `/app.js` (the bundle) and, for the fetching one, `/api/post.json` from its own origin;
 * the React-like one sets og:image to `/ridge.png`.
 */

/** A shell as the starters build it: an empty mount element and one script. */
export const shell = (script: string, title = 'React App') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><script src="/app.js" defer></script></head><body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div><script>${script}</script></body></html>`;

export const ARTICLE = `${'The ridge trail climbs through old pines before it opens onto the lake. '.repeat(12)}`;

/** React-like: the script sets the title, the meta description and og:image, and renders the article. */
export const REACT_SHELL = shell(`
  document.title = 'Ridge trail guide';
  const meta = (attr, key, content) => { const m = document.createElement('meta'); m.setAttribute(attr, key); m.setAttribute('content', content); document.head.appendChild(m); };
  meta('name', 'description', 'Twelve kilometres along the ridge, with the lake at the end.');
  meta('property', 'og:image', '/ridge.png');
  document.getElementById('root').innerHTML = '<article><h1>Ridge trail guide</h1><p>${ARTICLE}</p></article>';
`);

/** Loads its content with fetch() from its own origin. */
export const FETCH_SHELL = shell(`
  fetch('/api/post.json').then((r) => r.json()).then((post) => {
    document.title = post.title;
    document.getElementById('root').innerHTML = '<article><h1>' + post.title + '</h1><p>' + post.body + '</p></article>';
  });
`);

/** Vue-like: writes its meta tags with insertAdjacentHTML. */
export const VUE_SHELL = shell(
  `
  document.head.insertAdjacentHTML('beforeend', '<meta property="og:title" content="Harbour market, Saturdays"><meta property="og:description" content="Fish, bread and flowers from seven.">');
  document.getElementById('root').insertAdjacentHTML('afterbegin', '<main><p>${ARTICLE}</p></main>');
`,
  'Vite App',
).replace('<div id="root">', '<div id="app">');
