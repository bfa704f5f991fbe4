/**
 * The report's stylesheet, inline in the page. System fonts only (nothing to fetch); colours
 * follow the reader's light or dark preference and pass WCAG AA contrast on both; a category's
 * colour always comes with its pattern and its label.
 */
export const REPORT_CSS = `
:root { --bg: #ffffff; --fg: #1b1f24; --muted: #4a5360; --line: #c9ced6; --panel: #f4f6f8; --accent: #1f5fa8; --bar: #2f6db5;
  --ok: #2e7d32; --redirect: #1f5fa8; --client: #a04e00; --server: #b3261e; --none: #555d68; --ground: #ffffff; --focus: #b35c00; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15181c; --fg: #e8eaed; --muted: #b4bcc6; --line: #3c434c; --panel: #1f242a; --accent: #8cb8f0; --bar: #6ea4e6;
    --ok: #73c47a; --redirect: #8cb8f0; --client: #f0a45a; --server: #f28b82; --none: #aab2bc; --ground: #15181c; --focus: #ffb866; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header, main, footer { max-width: 60rem; margin: 0 auto; padding: 0 1rem; }
h1 { margin: 1.2rem 0 0.2rem; font-size: 1.8rem; }
h2 { margin: 2rem 0 0.4rem; font-size: 1.3rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
.meta, .note, footer { color: var(--muted); }
.meta { margin: 0 0 0.6rem; overflow-wrap: anywhere; }
a { color: var(--accent); }
a:focus-visible, summary:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -10000px; }
.skip:focus { position: static; display: inline-block; margin: 0.5rem 1rem; }
nav ul { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; }
.headline { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: 0.6rem; margin: 0; }
.headline div { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 0.6rem 0.8rem; }
.headline dt { font-weight: 600; }
.headline dd { margin: 0; }
.big { font-size: 1.6rem; font-weight: 700; display: block; }
.note { font-size: 0.9rem; }
.empty { background: var(--panel); border-left: 4px solid var(--muted); padding: 0.6rem 0.8rem; }
figure { margin: 0.6rem 0; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart text { fill: var(--fg); font: 13px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
svg.chart .axis-name { fill: var(--muted); }
svg.chart .grid { stroke: var(--line); stroke-dasharray: 3 3; }
svg.chart .baseline, svg.chart .tick { stroke: var(--muted); }
/* a patterned bar names its pattern in its fill attribute, which a class rule would override */
svg.chart .bar:not([fill]) { fill: var(--bar); }
svg.chart .line { stroke: var(--bar); stroke-width: 2.5; }
svg.chart .marker { fill: var(--bg); stroke: var(--bar); stroke-width: 2; }
svg.chart .bar.bar-solid { fill: var(--ok); }
svg.chart .pattern-ground { fill: var(--ground); }
svg.chart .pattern-hatch .pattern-ink { stroke: var(--redirect); }
svg.chart .pattern-dots .pattern-ink { fill: var(--client); }
svg.chart .pattern-cross .pattern-ink { stroke: var(--server); }
svg.chart .pattern-stripes .pattern-ink { stroke: var(--none); }
svg.chart .bar-hatch { stroke: var(--redirect); }
svg.chart .bar-dots { stroke: var(--client); }
svg.chart .bar-cross { stroke: var(--server); }
svg.chart .bar-stripes { stroke: var(--none); }
details { margin: 0.4rem 0 0.8rem; }
summary { cursor: pointer; color: var(--accent); }
table { border-collapse: collapse; margin: 0.4rem 0; font-size: 0.95rem; }
caption { text-align: left; font-weight: 600; padding: 0.2rem 0; }
th, td { padding: 0.2rem 0.8rem 0.2rem 0; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th[scope="row"] { font-weight: normal; overflow-wrap: anywhere; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
footer { margin-top: 2rem; padding-bottom: 2rem; font-size: 0.9rem; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; overflow-wrap: anywhere; }
@media print { nav, .skip { display: none; } details { display: block; } }
`;
