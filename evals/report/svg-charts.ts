// Dependency-free inline SVG charts for the HTML report.
const PALETTE = ['#2563eb', '#16a34a', '#f59e0b', '#dc2626', '#7c3aed', '#0891b2', '#db2777', '#65a30d'];

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Room right of a full bar for its label, e.g. "100.0% (300/300)" in a wide fallback font. */
const LABEL_ROOM = 140;
/**
 * Width of 12px text: SVG cannot measure before layout, so this is an upper bound for common fallback fonts
 * (DejaVu Sans averages under 7 px a character at 12px); test/report-chromium.test.ts checks it in Chromium.
 */
const textWidth = (s: string) => Math.ceil(s.length * 7.5);
/** Left margin wide enough for the longest row label, so none is cut off at the SVG's left edge. */
const labelWidth = (labels: string[]) => Math.max(60, ...labels.map(textWidth)) + 12;

/** Horizontal bars, one per label; values in [0, max]. */
export function barChart(title: string, rows: Array<{ label: string; value: number; text?: string }>, max = 1, color = PALETTE[0]): string {
  const rowH = 22,
    labelW = labelWidth(rows.map((r) => r.label)),
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
    labelW = labelWidth(rows.map((r) => r.label)),
    barW = 360;
  const max = Math.max(1, ...rows.map((r) => r.values.reduce((a, b) => a + b, 0)));
  let lx = 10;
  const legend = series
    .map((s, i) => {
      const item = `<rect x="${lx}" y="8" width="10" height="10" fill="${colors[i % colors.length]}"/><text x="${lx + 14}" y="17">${esc(s)}</text>`;
      lx += 24 + textWidth(s);
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

/** A histogram of values (e.g. latency in ms), with a y-axis of sample counts. */
export function histogram(title: string, values: number[], bins = 12, unit = 'ms'): string {
  const w = 560,
    h = 200,
    left = 48,
    right = 12,
    top = 10,
    bottom = 34;
  if (!values.length) return svg(title, w, 60, '<text x="10" y="40">no data</text>');
  let lo = Infinity,
    hi = -Infinity;
  for (const v of values) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
  const step = (hi - lo) / bins || 1;
  const counts: number[] = new Array(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / step))]!++;
  const maxC = Math.max(...counts);
  const plotH = h - top - bottom;
  const bw = (w - left - right) / bins;
  const y = (c: number) => top + plotH - (c / maxC) * plotH;
  const bars = counts
    .map(
      (c, i) =>
        `<rect x="${(left + i * bw).toFixed(1)}" y="${y(c).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${(top + plotH - y(c)).toFixed(1)}" fill="${PALETTE[5]}"><title>${Math.round(lo + i * step)}–${Math.round(lo + (i + 1) * step)} ${unit}: ${c}</title></rect>`,
    )
    .join('');
  // Whole-number ticks only: a count of 2.5 samples means nothing.
  const ticks = [...new Set([0, Math.round(maxC / 2), maxC])];
  const yAxis =
    `<line x1="${left - 4}" y1="${top}" x2="${left - 4}" y2="${top + plotH}" stroke="#94a3b8"/>` +
    ticks
      .map(
        (t) =>
          `<line x1="${left - 8}" y1="${y(t).toFixed(1)}" x2="${left - 4}" y2="${y(t).toFixed(1)}" stroke="#94a3b8"/><text x="${left - 10}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end">${t}</text>`,
      )
      .join('') +
    `<text x="12" y="${top + plotH / 2}" text-anchor="middle" transform="rotate(-90 12 ${top + plotH / 2})">samples</text>`;
  const xAxis =
    `<line x1="${left}" y1="${top + plotH}" x2="${w - right}" y2="${top + plotH}" stroke="#94a3b8"/>` +
    `<text x="${left}" y="${h - 14}">${Math.round(lo)} ${unit}</text><text x="${(left + w - right) / 2}" y="${h - 14}" text-anchor="middle">${Math.round((lo + hi) / 2)} ${unit}</text><text x="${w - right}" y="${h - 14}" text-anchor="end">${Math.round(hi)} ${unit}</text>`;
  return svg(title, w, h, bars + yAxis + xAxis);
}

function svg(title: string, w: number, h: number, body: string): string {
  return `<figure><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="system-ui,sans-serif" font-size="12" role="img" aria-label="${esc(title)}">${body}</svg></figure>`;
}
