// Dependency-free inline SVG charts for the HTML report.
const PALETTE = ['#2563eb', '#16a34a', '#f59e0b', '#dc2626', '#7c3aed', '#0891b2', '#db2777', '#65a30d'];

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Room right of a full bar for its label, e.g. "100.0% (300/300)" in a wide fallback font. */
const LABEL_ROOM = 140;

/** Horizontal bars, one per label; values in [0, max]. */
export function barChart(title: string, rows: Array<{ label: string; value: number; text?: string }>, max = 1, color = PALETTE[0]): string {
  const rowH = 22,
    labelW = 140,
    barW = 360,
    h = rows.length * rowH + 30;
  const bars = rows
    .map((r, i) => {
      const y = 24 + i * rowH;
      const w = max > 0 ? Math.max(0, (r.value / max) * barW) : 0;
      return `<text x="${labelW - 6}" y="${y + 14}" text-anchor="end">${esc(r.label)}</text><rect x="${labelW}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 6}" fill="${color}" rx="2"/><text x="${labelW + w + 4}" y="${y + 14}">${esc(r.text ?? String(r.value))}</text>`;
    })
    .join('');
  return svg(title, labelW + barW + LABEL_ROOM, h, bars);
}

/** Stacked horizontal bars: each row split into named series. */
export function stackedChart(title: string, series: string[], rows: Array<{ label: string; values: number[] }>, colors = PALETTE): string {
  const rowH = 22,
    labelW = 140,
    barW = 360;
  const max = Math.max(1, ...rows.map((r) => r.values.reduce((a, b) => a + b, 0)));
  let lx = 10;
  const legend = series
    .map((s, i) => {
      const item = `<rect x="${lx}" y="8" width="10" height="10" fill="${colors[i % colors.length]}"/><text x="${lx + 14}" y="17">${esc(s)}</text>`;
      lx += 24 + s.length * 7;
      return item;
    })
    .join('');
  const bars = rows
    .map((r, i) => {
      const y = 28 + i * rowH;
      let x = labelW;
      const parts = r.values
        .map((v, j) => {
          const w = (v / max) * barW;
          const rect = `<rect x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 6}" fill="${colors[j % colors.length]}"><title>${esc(`${series[j]}: ${v}`)}</title></rect>`;
          x += w;
          return rect;
        })
        .join('');
      const total = r.values.reduce((a, b) => a + b, 0);
      return `<text x="${labelW - 6}" y="${y + 14}" text-anchor="end">${esc(r.label)}</text>${parts}<text x="${x + 4}" y="${y + 14}">${total}</text>`;
    })
    .join('');
  return svg(title, Math.max(labelW + barW + LABEL_ROOM, lx), rows.length * rowH + 36, legend + bars);
}

/** A histogram of values (e.g. latency in ms). */
export function histogram(title: string, values: number[], bins = 12, unit = 'ms'): string {
  const w = 560,
    h = 180,
    pad = 30;
  if (!values.length) return svg(title, w, 60, '<text x="10" y="40">no data</text>');
  const lo = Math.min(...values),
    hi = Math.max(...values);
  const step = (hi - lo) / bins || 1;
  const counts = new Array(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / step))]++;
  const maxC = Math.max(...counts);
  const bw = (w - 2 * pad) / bins;
  const bars = counts
    .map((c, i) => {
      const bh = (c / maxC) * (h - 2 * pad);
      return `<rect x="${(pad + i * bw).toFixed(1)}" y="${(h - pad - bh).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${bh.toFixed(1)}" fill="${PALETTE[5]}"><title>${Math.round(lo + i * step)}–${Math.round(lo + (i + 1) * step)} ${unit}: ${c}</title></rect>`;
    })
    .join('');
  const axis = `<text x="${pad}" y="${h - 8}">${Math.round(lo)} ${unit}</text><text x="${w - pad}" y="${h - 8}" text-anchor="end">${Math.round(hi)} ${unit}</text>`;
  return svg(title, w, h, bars + axis);
}

function svg(title: string, w: number, h: number, body: string): string {
  return `<figure><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="system-ui,sans-serif" font-size="12" role="img" aria-label="${esc(title)}">${body}</svg></figure>`;
}
