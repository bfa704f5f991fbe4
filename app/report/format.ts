/** Text for the report: escaping and the numbers as a reader says them. */

const INTEGER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const DECIMAL = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/** Escapes text for HTML and SVG element content and attribute values. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function formatCount(n: number): string {
  return INTEGER.format(n);
}

/** One decimal for small rates (0.4 pages/s), none past 100. */
export function formatRate(n: number): string {
  return Number.isFinite(n) ? (n >= 100 ? INTEGER.format(n) : DECIMAL.format(n)) : '0';
}

/** `part` of `whole` as a percentage; 0 of 0 is "0 %", never NaN. */
export function formatShare(part: number, whole: number): string {
  if (whole <= 0) return '0 %';
  return `${DECIMAL.format((100 * part) / whole)} %`;
}

const BYTE_UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function formatBytes(n: number): string {
  let v = Math.max(0, n);
  let unit = 0;
  while (v >= 1024 && unit < BYTE_UNITS.length - 1) {
    v /= 1024;
    unit++;
  }
  return unit === 0 ? `${INTEGER.format(v)} bytes` : `${DECIMAL.format(v)} ${BYTE_UNITS[unit]}`;
}

/** 950 ms, 42 s, 3 min 5 s, 2 h 10 min, 3 d 4 h. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/** Time since the crawl's start on an axis: 0:00, 1:30, 1:02:00 (h:mm:ss), or days. */
export function formatElapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const two = (x: number) => String(x).padStart(2, '0');
  if (d > 0) return `${d}d ${two(h)}:${two(m)}`;
  if (h > 0) return `${h}:${two(m)}:${two(sec)}`;
  return `${m}:${two(sec)}`;
}

/** An ISO time without milliseconds, in UTC: 2026-11-29 09:45:20 UTC. */
export function formatTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC');
}
