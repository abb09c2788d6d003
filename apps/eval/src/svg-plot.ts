/** A small, dependency-free SVG line chart (linear or log axes, legend), enough for the benchmark summary. */

export interface Series {
  readonly label: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface ChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly xLog?: boolean | undefined;
  readonly yLog?: boolean | undefined;
  /** A horizontal reference line (a target), drawn dashed. */
  readonly hLines?: readonly { readonly y: number; readonly label: string }[] | undefined;
  readonly width?: number | undefined;
  readonly height?: number | undefined;
}

const COLORS = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#9467bd',
  '#ff7f0e',
  '#8c564b',
  '#e377c2',
  '#17becf',
  '#7f7f7f',
];

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function fmt(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1_000_000) return `${+(v / 1_000_000).toPrecision(3)}M`;
  if (a >= 1000) return `${+(v / 1000).toPrecision(3)}k`;
  if (a >= 1) return `${+v.toPrecision(3)}`;
  return `${+v.toPrecision(2)}`;
}

function ticks(min: number, max: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) out.push(10 ** e);
    return out;
  }
  const span = max - min || 1;
  const step0 = 10 ** Math.floor(Math.log10(span / 5));
  const step = [1, 2, 5, 10].map((m) => m * step0).find((s) => span / s <= 6) ?? step0 * 10;
  const out: number[] = [];
  for (let v = Math.floor(min / step) * step; v <= max + step * 1e-9; v += step) out.push(+v.toFixed(10));
  return out;
}

/** Renders the chart. Points that cannot be placed on a log axis (≤ 0) are dropped; an empty chart says so. */
export function lineChart(series: readonly Series[], options: ChartOptions): string {
  const W = options.width ?? 820;
  const H = options.height ?? 400;
  const m = { top: 40, right: 300, bottom: 50, left: 70 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const usable = series
    .map((s) => ({
      label: s.label,
      points: s.points
        .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
        .filter(([x, y]) => (!options.xLog || x > 0) && (!options.yLog || y > 0))
        .slice()
        .sort((a, b) => a[0] - b[0]),
    }))
    .filter((s) => s.points.length > 0);
  const head = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="${W / 2 - m.right / 2}" y="22" text-anchor="middle" font-size="15" font-weight="600">${esc(options.title)}</text>`;
  if (usable.length === 0) {
    return `${head}
<text x="${W / 2}" y="${H / 2}" text-anchor="middle" fill="#777">no data (benchmark not run)</text>
</svg>
`;
  }
  const xs = usable.flatMap((s) => s.points.map((p) => p[0]));
  const ys = [
    ...usable.flatMap((s) => s.points.map((p) => p[1])),
    ...(options.hLines ?? []).map((h) => h.y),
  ].filter((y) => !options.yLog || y > 0);
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  if (!options.yLog) y0 = Math.min(0, y0);
  if (x0 === x1) [x0, x1] = options.xLog ? [x0 / 2, x1 * 2] : [x0 - 1, x1 + 1];
  if (y0 === y1) [y0, y1] = options.yLog ? [y0 / 2, y1 * 2] : [y0 - 1, y1 + 1];
  const xt = ticks(x0, x1, !!options.xLog);
  const yt = ticks(y0, y1, !!options.yLog);
  x0 = Math.min(x0, xt[0] ?? x0);
  x1 = Math.max(x1, xt[xt.length - 1] ?? x1);
  y0 = Math.min(y0, yt[0] ?? y0);
  y1 = Math.max(y1, yt[yt.length - 1] ?? y1);
  const tx = (v: number) => (options.xLog ? Math.log10(v) : v);
  const ty = (v: number) => (options.yLog ? Math.log10(v) : v);
  const X = (v: number) => m.left + ((tx(v) - tx(x0)) / (tx(x1) - tx(x0) || 1)) * pw;
  const Y = (v: number) => m.top + ph - ((ty(v) - ty(y0)) / (ty(y1) - ty(y0) || 1)) * ph;
  const parts: string[] = [head];
  parts.push(`<g stroke="#e5e5e5">`);
  for (const v of yt)
    parts.push(`<line x1="${m.left}" x2="${m.left + pw}" y1="${Y(v).toFixed(1)}" y2="${Y(v).toFixed(1)}"/>`);
  for (const v of xt)
    parts.push(`<line x1="${X(v).toFixed(1)}" x2="${X(v).toFixed(1)}" y1="${m.top}" y2="${m.top + ph}"/>`);
  parts.push('</g>');
  parts.push(
    `<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`,
    ...yt.map(
      (v) => `<text x="${m.left - 6}" y="${(Y(v) + 4).toFixed(1)}" text-anchor="end">${fmt(v)}</text>`,
    ),
    ...xt.map(
      (v) => `<text x="${X(v).toFixed(1)}" y="${m.top + ph + 18}" text-anchor="middle">${fmt(v)}</text>`,
    ),
    `<text x="${m.left + pw / 2}" y="${H - 10}" text-anchor="middle">${esc(options.xLabel)}</text>`,
    `<text transform="translate(16 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(options.yLabel)}</text>`,
  );
  for (const h of options.hLines ?? []) {
    if (options.yLog && h.y <= 0) continue;
    const y = Y(h.y).toFixed(1);
    parts.push(
      `<line x1="${m.left}" x2="${m.left + pw}" y1="${y}" y2="${y}" stroke="#999" stroke-dasharray="6 4"/>`,
      `<text x="${m.left + pw - 4}" y="${Number(y) - 4}" text-anchor="end" fill="#666">${esc(h.label)}</text>`,
    );
  }
  usable.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(' ');
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts}"/>`);
    for (const [x, y] of s.points) {
      parts.push(
        `<circle cx="${X(x).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="3" fill="${color}"><title>${esc(`${s.label}: ${fmt(x)} → ${fmt(y)}`)}</title></circle>`,
      );
    }
    const ly = m.top + 8 + i * 18;
    parts.push(
      `<line x1="${m.left + pw + 12}" x2="${m.left + pw + 32}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${m.left + pw + 38}" y="${ly + 4}">${esc(s.label.length > 44 ? `${s.label.slice(0, 43)}…` : s.label)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
