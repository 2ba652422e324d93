/**
 * The card's stylesheet: every rule under `.ll-card`, so it can sit in any page (or in the
 * `<linklens-card>` shadow root). Logical properties throughout, so a right-to-left card mirrors;
 * a container query fits the small card to its column; the whole card is one link (the title's
 * link is stretched over it), with the play button above it.
 */
export const cardStyles = `
.ll-card{--ll-bg:#fff;--ll-fg:#0f1419;--ll-muted:#536471;--ll-border:#cfd9de;--ll-media:#eff3f4;--ll-focus:#1d72d3;
position:relative;box-sizing:border-box;display:flex;flex-direction:column;width:100%;max-width:560px;margin:0;
container-type:inline-size;overflow:hidden;border:1px solid var(--ll-border);border-radius:12px;background:var(--ll-bg);color:var(--ll-fg);
font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Helvetica Neue",Arial,sans-serif;text-align:start}
.ll-card *,.ll-card *::before,.ll-card *::after{box-sizing:border-box}
.ll-card.ll-theme-dark{--ll-bg:#15202b;--ll-fg:#e7e9ea;--ll-muted:#8b98a5;--ll-border:#38444d;--ll-media:#1e2732;--ll-focus:#6cb4ff}
@media (prefers-color-scheme:dark){.ll-card.ll-theme-auto{--ll-bg:#15202b;--ll-fg:#e7e9ea;--ll-muted:#8b98a5;--ll-border:#38444d;--ll-media:#1e2732;--ll-focus:#6cb4ff}}
.ll-card:focus-within{outline:2px solid var(--ll-focus);outline-offset:2px}
.ll-media-box{position:relative;flex:none;background:var(--ll-media)}
.ll-large .ll-media-box{width:100%;aspect-ratio:1.91/1}
.ll-large.ll-has-player .ll-media-box{aspect-ratio:16/9}
.ll-media{position:absolute;inset:0;overflow:hidden;background:var(--ll-media)}
.ll-media canvas{position:absolute;inset:0;width:100%;height:100%}
.ll-image{position:relative;display:block;width:100%;height:100%;max-width:none;object-fit:cover;border:0;color:transparent}
.ll-body{display:flex;flex-direction:column;gap:4px;min-width:0;padding:12px 14px}
.ll-site{display:flex;align-items:center;gap:6px;min-width:0;color:var(--ll-muted);font-size:13px}
.ll-site-name{overflow:hidden;white-space:nowrap;text-overflow:ellipsis}
.ll-icon{display:inline-flex;flex:none;align-items:center;justify-content:center;width:20px;height:20px;border-radius:4px;overflow:hidden}
.ll-icon img{display:block;width:16px;height:16px}
.ll-title{display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:2;line-clamp:2;overflow:hidden;font-size:15px;font-weight:600;line-height:1.3;
color:var(--ll-fg);text-decoration:none;overflow-wrap:anywhere}
.ll-link::after{content:"";position:absolute;inset:0;z-index:1}
.ll-link:focus{outline:none}
.ll-link:hover{text-decoration:underline}
.ll-description{display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:3;line-clamp:3;overflow:hidden;margin:0;color:var(--ll-muted);overflow-wrap:anywhere}
.ll-byline,.ll-fact{margin:0;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;color:var(--ll-muted);font-size:13px}
.ll-fact{color:var(--ll-fg);font-weight:500}
.ll-play{position:absolute;z-index:2;inset-block-start:50%;inset-inline-start:50%;transform:translate(-50%,-50%);display:flex;align-items:center;justify-content:center;
width:60px;height:60px;padding:0;border:0;border-radius:50%;background:rgb(0 0 0 / .72);color:#fff;cursor:pointer}
[dir=rtl] .ll-play{transform:translate(50%,-50%)}
.ll-play:hover{background:rgb(0 0 0 / .86)}
.ll-play:focus-visible{outline:3px solid #fff;outline-offset:2px}
.ll-player{position:absolute;inset:0;z-index:3;width:100%;height:100%;border:0;background:#000}
.ll-no-image{background:#000}
.ll-small{flex-direction:row}
.ll-small .ll-media-box{width:120px;min-height:120px;align-self:stretch}
.ll-small .ll-title{font-size:14px}
.ll-small .ll-description{-webkit-line-clamp:2;line-clamp:2}
.ll-small.ll-has-player{flex-direction:column}
.ll-small.ll-has-player .ll-media-box{width:100%;min-height:0;aspect-ratio:16/9}
@container (max-width:360px){.ll-small .ll-media-box{width:80px;min-height:80px}.ll-small .ll-body{padding:10px 12px}.ll-small .ll-description{display:none}}
.ll-failed .ll-title{font-weight:500;font-size:14px;color:var(--ll-muted)}
`.trim();
