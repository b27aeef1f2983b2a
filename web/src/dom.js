// Small helpers shared by the page's modules: building elements and
// formatting numbers, sizes and times.

export const $ = (id) => document.getElementById(id);

/** `el('div', {class: 'x'}, 'text' | node | [nodes])` */
export function el(tag, attrs = {}, content) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  if (content === undefined || content === null) return node;
  if (Array.isArray(content)) node.append(...content.filter((c) => c !== null && c !== undefined));
  else node.append(content);
  return node;
}

export function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

export function formatMs(ms) {
  return ms < 1000 ? `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms` : seconds(ms);
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

export function compact(n) {
  return new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 }).format(n);
}

/** An ISO 8601 time as a <time> element showing the local time. */
export function timeEl(iso) {
  const when = new Date(iso);
  const text = Number.isNaN(when.getTime()) ? iso : when.toLocaleString();
  return el('time', { datetime: iso, title: iso }, text);
}

/** A node's name for people: its first symbol name, else "#id". */
export function nodeName(n) {
  return n.symbolNames?.[0] ?? `#${n.id}`;
}
