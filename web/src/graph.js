// The version tree drawn as a graph: one row per version (newest on top),
// each branch in a lane of its own, a line from every version to its
// parent. The current version is marked; clicking a version calls
// `onPick(id)`.

const ROW = 26;
const LANE = 16;
const R = 5;
const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Lanes: a version continues its parent's lane if it is the parent's first
 *  child; every later child starts a new lane. */
export function layout(versions) {
  const lane = new Map();
  const firstChildTaken = new Set();
  let lanes = 0;
  for (const v of versions) { // parents come before their children
    if (v.parent == null || !lane.has(v.parent)) {
      lane.set(v.id, lanes++);
    } else if (!firstChildTaken.has(v.parent)) {
      firstChildTaken.add(v.parent);
      lane.set(v.id, lane.get(v.parent));
    } else {
      lane.set(v.id, lanes++);
    }
  }
  return { lane, lanes };
}

export function drawGraph(container, graph, { selected, onPick }) {
  const versions = graph.versions;
  const { lane, lanes } = layout(versions);
  const row = new Map(versions.map((v, i) => [v.id, versions.length - 1 - i]));
  const x = (id) => 10 + lane.get(id) * LANE;
  const y = (id) => 14 + row.get(id) * ROW;
  const textX = 10 + lanes * LANE + 6;
  const root = svg('svg', {
    class: 'graph',
    width: '100%',
    height: versions.length * ROW + 8,
    role: 'list',
    'aria-label': 'Versions, newest first',
  });
  const edges = svg('g', { class: 'edges' });
  for (const v of versions) {
    if (v.parent == null || !row.has(v.parent)) continue;
    const [x1, y1, x2, y2] = [x(v.parent), y(v.parent), x(v.id), y(v.id)];
    const d = x1 === x2 ? `M${x1},${y1} L${x2},${y2}` : `M${x1},${y1} C${x1},${y1 - ROW / 2} ${x2},${y1 - ROW / 2} ${x2},${y1 - ROW} L${x2},${y2}`;
    edges.append(svg('path', { d, class: `edge lane-${lane.get(v.id) % 6}` }));
  }
  root.append(edges);
  for (const v of versions) {
    const g = svg('g', {
      class: `version${v.id === graph.current ? ' current' : ''}${v.id === selected ? ' selected' : ''}`,
      'data-version': v.id,
      role: 'listitem',
      tabindex: 0,
    });
    g.append(svg('title', {}, `version ${v.id}: ${v.description}\n${v.timestamp} · ${v.nodeCount} nodes${v.id === graph.current ? ' · current' : ''}`));
    g.append(svg('rect', { class: 'hit', x: 0, y: y(v.id) - ROW / 2, width: '100%', height: ROW }));
    g.append(svg('circle', { cx: x(v.id), cy: y(v.id), r: v.id === graph.current ? R + 1.5 : R, class: `dot lane-${lane.get(v.id) % 6}` }));
    g.append(svg('text', { x: textX, y: y(v.id) + 4, class: 'label' }, `${v.id}`));
    g.append(svg('text', { x: textX + 34, y: y(v.id) + 4, class: 'description' }, v.description));
    const pick = () => onPick(v.id);
    g.addEventListener('click', pick);
    g.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pick(); } });
    root.append(g);
  }
  container.replaceChildren(root);
}
