// Small inline SVG charts drawn from the timeline: lines over time and horizontal bars. Each
// chart is an image with a text alternative; the numbers are also in a table beside it.

const NS = "http://www.w3.org/2000/svg";
const W = 600, H = 220, PAD = { l: 44, r: 12, t: 10, b: 28 };

function el(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function frame(label) {
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": label });
  svg.append(el("title", {}, label));
  return svg;
}

function shortTime(iso, bucket) {
  const t = iso.replace("T", " ");
  return bucket === "minute" || bucket === "hour" ? t.slice(5, 16) : t.slice(0, 10);
}

// Lines: `series` is [{name, values}] over the same `labels` (bucket starts).
export function lineChart(label, labels, series, bucket) {
  const svg = frame(label);
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  const x = (i) => PAD.l + (labels.length <= 1 ? (W - PAD.l - PAD.r) / 2 : (i * (W - PAD.l - PAD.r)) / (labels.length - 1));
  const y = (v) => H - PAD.b - (v * (H - PAD.t - PAD.b)) / max;
  svg.append(el("line", { class: "axis", x1: PAD.l, y1: H - PAD.b, x2: W - PAD.r, y2: H - PAD.b }));
  svg.append(el("line", { class: "axis", x1: PAD.l, y1: PAD.t, x2: PAD.l, y2: H - PAD.b }));
  svg.append(el("text", { x: PAD.l - 6, y: PAD.t + 10, "text-anchor": "end" }, String(max)));
  svg.append(el("text", { x: PAD.l - 6, y: H - PAD.b, "text-anchor": "end" }, "0"));
  if (labels.length) {
    svg.append(el("text", { x: PAD.l, y: H - 8 }, shortTime(labels[0], bucket)));
    svg.append(el("text", { x: W - PAD.r, y: H - 8, "text-anchor": "end" }, shortTime(labels[labels.length - 1], bucket)));
  }
  series.forEach((s, k) => {
    const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    svg.append(el("polyline", { class: `series${k}`, points }));
    if (s.values.length === 1) svg.append(el("circle", { class: `series${k}`, cx: x(0), cy: y(s.values[0]), r: 4 }));
  });
  return svg;
}

// Horizontal bars: `rows` is [{name, parts: [numbers]}], one colour per part.
export function barChart(label, rows) {
  const svg = frame(label);
  const max = Math.max(1, ...rows.map((r) => r.parts.reduce((a, b) => a + b, 0)));
  const shown = rows.slice(0, 10);
  const rowH = (H - PAD.t - PAD.b) / Math.max(shown.length, 1);
  const left = 150;
  shown.forEach((r, i) => {
    const yy = PAD.t + i * rowH;
    svg.append(el("text", { x: left - 8, y: yy + rowH / 2 + 4, "text-anchor": "end" }, r.name.length > 22 ? r.name.slice(0, 21) + "…" : r.name));
    let xx = left;
    r.parts.forEach((v, k) => {
      const w = (v * (W - left - PAD.r - 40)) / max;
      if (w > 0) svg.append(el("rect", { class: `series${k}`, x: xx, y: yy + rowH * 0.15, width: w, height: rowH * 0.7 }));
      xx += w;
    });
    svg.append(el("text", { x: xx + 6, y: yy + rowH / 2 + 4 }, String(r.parts.reduce((a, b) => a + b, 0))));
  });
  return svg;
}
