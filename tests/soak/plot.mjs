// PNG plot of a soak run (latency, RSS, fds, ... over time, with fault
// markers).  Dependency-free on purpose: the soak harness must be able to
// emit a picture wherever plain Node runs, with no npm install step.
import { deflateSync } from 'node:zlib';
import { writeFileSync, realpathSync } from 'node:fs';

// ---- 5x7 bitmap font --------------------------------------------------------
// Classic column-major 5x7 font: 5 bytes (10 hex digits) per glyph, in the
// order of FONT_CHARS; bit 0 of each byte is the top row.
const FONT_CHARS = '0123456789 .,:-/()%_+=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const FONT_HEX =
  '3e5149453e00427f400042615149462141454b311814127f1027454545393c4a49493001710905033649494936064949291e' +
  '000000000000606000000050300000003636000008080808082010080402001c2241000041221c0023130864624040404040' +
  '08083e0808141414141420545454787f484444383844444420384444487f3854545418087e0901020c5252523e7f08040478' +
  '00447d40002040443d007f1028440000417f40007c041804787c0804047838444444387c14141408081414187c7c08040408' +
  '4854545420043f4440203c4040207c1c2040201c3c4030403c44281028440c5050503c4464544c447e1111117e7f49494936' +
  '3e414141227f4141221c7f494949417f090909013e4149497a7f0808087f00417f41002040413f017f081422417f40404040' +
  '7f020c027f7f0408107f3e4141413e7f090909063e4151215e7f09192946464949493101017f01013f4040403f1f2040201f' +
  '3f4038403f631408146307087008076151494543';
const FONT = new Map([...FONT_CHARS].map((ch, i) =>
  [ch, [0, 1, 2, 3, 4].map((c) => parseInt(FONT_HEX.substr(i * 10 + c * 2, 2), 16))]));

// ---- PNG encoding -------------------------------------------------------------
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  // The CRC covers the type and the data, not the length.
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

// ---- Canvas -----------------------------------------------------------------
class Canvas {
  constructor(w, h) {
    this.w = w;
    this.h = h;
    this.px = new Uint8Array(w * h * 3).fill(255);
    this.clip = null; // {x0, y0, x1, y1}, inclusive; keeps series inside frames
  }

  set(x, y, [r, g, b]) {
    x = Math.round(x); y = Math.round(y);
    if (x < 0 || y < 0 || x >= this.w || y >= this.h) return;
    const k = this.clip;
    if (k && (x < k.x0 || x > k.x1 || y < k.y0 || y > k.y1)) return;
    const i = (y * this.w + x) * 3;
    this.px[i] = r; this.px[i + 1] = g; this.px[i + 2] = b;
  }

  fill(x, y, w, h, c) {
    for (let j = 0; j < h; j++) for (let i = 0; i < w; i++) this.set(x + i, y + j, c);
  }

  // Bresenham with a square pen; endpoints are clamped so a wild point cannot
  // turn into a multi-million-step loop.
  line(x0, y0, x1, y1, c, pen = 1) {
    const lim = (v, n) => Math.round(Math.min(Math.max(v, -n), 2 * n));
    x0 = lim(x0, this.w); x1 = lim(x1, this.w); y0 = lim(y0, this.h); y1 = lim(y1, this.h);
    const dx = Math.abs(x1 - x0), dy = -Math.abs(y1 - y0);
    const sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    for (let err = dx + dy; ;) {
      this.fill(x0 - (pen >> 1), y0 - (pen >> 1), pen, pen, c); // centred, so 0 stays above the frame
      if (x0 === x1 && y0 === y1) break;
      const e2 = 2 * err;
      if (e2 >= dy) { err += dy; x0 += sx; }
      if (e2 <= dx) { err += dx; y0 += sy; }
    }
  }

  rect(x0, y0, x1, y1, c) {
    this.line(x0, y0, x1, y0, c); this.line(x1, y0, x1, y1, c);
    this.line(x1, y1, x0, y1, c); this.line(x0, y1, x0, y0, c);
  }

  static textWidth(s, scale = 1) { return s.length ? (s.length * 6 - 1) * scale : 0; }

  // Draws s with its top-left corner at (x, y); unknown characters render blank.
  text(x, y, s, c, scale = 1) {
    for (const ch of String(s)) {
      const cols = FONT.get(ch) ?? FONT.get(ch.toLowerCase());
      if (cols) {
        for (let cx = 0; cx < 5; cx++) for (let ry = 0; ry < 7; ry++)
          if (cols[cx] & (1 << ry)) this.fill(x + cx * scale, y + ry * scale, scale, scale, c);
      }
      x += 6 * scale;
    }
    return x;
  }

  png() {
    const stride = this.w * 3 + 1;
    const raw = Buffer.alloc(stride * this.h); // filter byte 0 (None) per row
    for (let y = 0; y < this.h; y++) raw.set(this.px.subarray(y * this.w * 3, (y + 1) * this.w * 3), y * stride + 1);
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(this.w, 0);
    ihdr.writeUInt32BE(this.h, 4);
    ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, RGB, deflate, no filter set, no interlace
    return Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0)),
    ]);
  }
}

// ---- Plot -------------------------------------------------------------------
const W = 1400, H = 900, LEFT = 90, RIGHT = W - 20, TOP = 40, BOTTOM = H - 86, S = 2;
const INK = [40, 40, 40], GRID = [225, 225, 225], MUTED = [110, 110, 110];
const FAULT_COLORS = {
  kill: [215, 30, 30], stop: [245, 150, 0], garbage: [140, 60, 200],
  huge: [130, 85, 35], cut: [225, 50, 170], reload: [0, 165, 165],
};
const EXTRA_COLORS = [[120, 120, 120], [90, 160, 30], [60, 60, 220], [200, 200, 0]];

// Step of 1, 2, 2.5 or 5 x 10^k giving at most `target` intervals over `range`.
function niceStep(range, target) {
  const raw = range / target, mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw * (1 - 1e-9));
}

// Enough decimals to tell ticks `step` apart (2.5 needs one, 0.25 two); k/M
// suffixes keep big counts inside the left margin.
function fmt(v, step) {
  const [div, suffix] = step >= 1e6 ? [1e6, 'M'] : step >= 1e3 ? [1e3, 'k'] : [1, ''];
  const s = step / div;
  let d = 0;
  while (d < 6 && Math.abs(s * 10 ** d - Math.round(s * 10 ** d)) > 1e-6) d++;
  return (v / div).toFixed(d) + (v ? suffix : '');
}

export function writePlot(path, { title, durationS, panels, faults = [] }) {
  const cv = new Canvas(W, H);
  const dur = durationS > 0 ? durationS : 1;
  const xOf = (t) => LEFT + (t / dur) * (RIGHT - LEFT);
  cv.text((W - Canvas.textWidth(title ?? '', S)) / 2, 10, title ?? '', INK, S);

  // Unknown fault kinds still get a stable, distinct color.
  const faultColor = new Map(Object.entries(FAULT_COLORS));
  for (const f of faults)
    if (!faultColor.has(f.kind)) faultColor.set(f.kind, EXTRA_COLORS[(faultColor.size - 6) % EXTRA_COLORS.length]);

  const minStep = niceStep(dur / 60, 12);
  const slot = (BOTTOM - TOP) / Math.max(1, panels.length);
  panels.forEach((panel, pi) => {
    const y0 = Math.round(TOP + pi * slot + 22), y1 = Math.round(TOP + (pi + 1) * slot - 8);
    // A loop, not Math.max(...values): long runs would overflow the call stack.
    let max = 0;
    for (const s of panel.series) for (const [, v] of s.points) if (v > max && Number.isFinite(v)) max = v;
    const ymax = max > 0 ? max * 1.1 : 1;
    const yOf = (v) => y1 - (v / ymax) * (y1 - y0);

    // Header: label (unit) on the left, legend right-aligned.
    cv.text(LEFT, y0 - 20, panel.unit ? `${panel.label} (${panel.unit})` : panel.label, INK, S);
    let lx = RIGHT - panel.series.reduce((w, s) => w + 30 + Canvas.textWidth(s.name, S) + 16, 0) + 16;
    for (const s of panel.series) {
      cv.fill(lx, y0 - 14, 22, 3, s.color);
      lx = cv.text(lx + 28, y0 - 20, s.name, s.color, S) + 16;
    }

    // Grid and y ticks.
    const yStep = niceStep(ymax, 5);
    for (let v = 0; v <= ymax + 1e-9; v += yStep) {
      const y = Math.round(yOf(v));
      cv.line(LEFT, y, RIGHT, y, GRID);
      const label = fmt(v, yStep);
      cv.text(LEFT - 8 - Canvas.textWidth(label, S), y - 7, label, MUTED, S);
    }
    for (let m = 0; m * 60 <= dur + 1e-9; m += minStep) cv.line(xOf(m * 60), y0, xOf(m * 60), y1, GRID);

    // Faults sit behind the data so the series stay readable.
    cv.clip = { x0: LEFT + 1, y0: y0 + 1, x1: RIGHT - 1, y1: y1 - 1 };
    for (const f of faults) cv.line(xOf(f.t), y0, xOf(f.t), y1, faultColor.get(f.kind));
    for (const s of panel.series) {
      let prev = null; // a non-finite value breaks the line
      for (const [t, v] of s.points) {
        const p = Number.isFinite(t) && Number.isFinite(v) ? [xOf(t), yOf(v)] : null;
        if (p && prev) cv.line(prev[0], prev[1], p[0], p[1], s.color, 2);
        else if (p) cv.fill(p[0] - 1, p[1] - 1, 3, 3, s.color); // lone point, still visible
        prev = p;
      }
    }
    cv.clip = null;
    cv.rect(LEFT, y0, RIGHT, y1, INK);

    if (pi === panels.length - 1) {
      for (let m = 0; m * 60 <= dur + 1e-9; m += minStep) {
        const x = Math.round(xOf(m * 60)), label = fmt(m, minStep);
        cv.line(x, y1, x, y1 + 4, INK);
        cv.text(x - Canvas.textWidth(label, S) / 2, y1 + 8, label, MUTED, S);
      }
      const axis = 'time (min)';
      cv.text((LEFT + RIGHT - Canvas.textWidth(axis, S)) / 2, y1 + 28, axis, INK, S);
    }
  });

  // Fault legend with counts, only for kinds that occurred.
  const counts = new Map();
  for (const f of faults) counts.set(f.kind, (counts.get(f.kind) ?? 0) + 1);
  let fx = cv.text(LEFT, H - 28, `faults (${faults.length}):`, INK, S) + 16;
  for (const [kind, color] of faultColor) {
    if (!counts.has(kind)) continue;
    cv.fill(fx, H - 31, 3, 20, color);
    fx = cv.text(fx + 10, H - 28, `${kind} ${counts.get(kind)}`, color, S) + 24;
  }

  writeFileSync(path, cv.png());
}

// ---- Demo: `node plot.mjs out.png` ----------------------------------------------
if (process.argv[1] && realpathSync(process.argv[1]) === import.meta.filename) {
  let seed = 42; // deterministic PRNG (mulberry32) so the demo is repeatable
  const rnd = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const durationS = 3600, kinds = Object.keys(FAULT_COLORS);
  const faults = Array.from({ length: 50 }, () => ({ t: rnd() * durationS, kind: kinds[Math.floor(rnd() * kinds.length)] }))
    .sort((a, b) => a.t - b.t);
  const near = (t) => faults.some((f) => t >= f.t && t - f.t < 6);
  const ts = Array.from({ length: 1800 }, (_, i) => i * 2);
  const series = (name, color, f) => ({ name, color, points: ts.map((t) => [t, f(t)]) });
  writePlot(process.argv[2] ?? 'soak-plot-demo.png', {
    title: 'soak run: demo data, 60 min, 50 faults',
    durationS,
    faults,
    panels: [
      { label: 'call latency', unit: 'ms', series: [
        series('p50', [70, 130, 230], (t) => 4 + rnd() * 2 + (near(t) ? 8 : 0)),
        series('p99', [20, 40, 140], (t) => 18 + rnd() * 10 + (near(t) ? 60 * rnd() : 0)),
      ] },
      { label: 'RSS', unit: 'MiB', series: [series('rss', [30, 150, 60], (t) => 80 + t / 300 + 4 * ((t % 600) / 600) + rnd())] },
      { label: 'open fds', unit: '', series: [series('fds', [90, 90, 90], (t) => Math.round(40 + (near(t) ? 6 : 0) + rnd() * 3))] },
    ],
  });
}
