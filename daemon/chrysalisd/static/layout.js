// The graph's layout, off the page's thread. A module worker of this origin: the CSP's
// 'self' allows it (the library's own worker is built from a blob: address, which the CSP
// refuses).
//
// 1. Clusters first: label propagation groups nodes that share most of their neighbours, in
//    a few passes over the edges; each group gets its own disc, the largest in the middle,
//    so the first picture already shows groups as groups (round 0).
// 2. Then ForceAtlas2 (Barnes-Hut past a few hundred nodes) tidies each group in rounds,
//    each round's positions posted back so the picture settles while the page stays usable.
import { Graph, forceAtlas2 } from "./vendor/graph.js";

const GOLDEN = Math.PI * (3 - Math.sqrt(5));

function clusters(n, edges) {
  const adjacent = Array.from({ length: n }, () => []);
  for (const [s, t] of edges) if (s !== t) { adjacent[s].push(t); adjacent[t].push(s); }
  const label = Int32Array.from({ length: n }, (_, i) => i);
  for (let pass = 0; pass < 12; pass++) {
    let moved = 0;
    for (let i = 0; i < n; i++) {
      if (!adjacent[i].length) continue;
      const votes = new Map();
      for (const j of adjacent[i]) votes.set(label[j], (votes.get(label[j]) || 0) + 1);
      let best = label[i], most = votes.get(best) || 0;
      for (const [l, v] of votes) if (v > most || (v === most && l < best)) { best = l; most = v; }
      if (best !== label[i]) { label[i] = best; moved++; }
    }
    if (!moved) break;
  }
  const groups = new Map();
  for (let i = 0; i < n; i++) {
    if (!groups.has(label[i])) groups.set(label[i], []);
    groups.get(label[i]).push(i);
  }
  return [...groups.values()].sort((a, b) => b.length - a.length);
}

// Sunflower discs: groups around the middle by size, each group's nodes on its own disc.
function seed(n, groups) {
  const xy = new Float32Array(n * 2);
  const unit = 10;
  let placed = 0;  // area used so far, in nodes
  groups.forEach((members) => {
    const r = Math.sqrt(placed + members.length / 2) * unit * 1.6;
    const angle = groups.length > 1 ? placed * GOLDEN * 0.37 : 0;
    const cx = placed ? Math.cos(angle) * r : 0, cy = placed ? Math.sin(angle) * r : 0;
    members.forEach((node, k) => {
      const d = Math.sqrt(k + 0.5) * unit * 0.9, a = k * GOLDEN;
      xy[2 * node] = cx + Math.cos(a) * d;
      xy[2 * node + 1] = cy + Math.sin(a) * d;
    });
    placed += members.length;
  });
  return xy;
}

onmessage = (event) => {
  const { ids, edges, rounds, perRound } = event.data;
  const n = ids.length;
  const groups = clusters(n, edges);
  const start = seed(n, groups);
  postMessage({ round: 0, rounds, positions: start, groups: groups.length });
  const graph = new Graph({ multi: true, type: "undirected" });
  for (let i = 0; i < n; i++) graph.addNode(i, { x: start[2 * i], y: start[2 * i + 1] });
  for (const [s, t] of edges) if (s !== t) graph.addEdge(s, t);
  const settings = {
    ...forceAtlas2.inferSettings(graph),
    barnesHutOptimize: n > 300,
    barnesHutTheta: 0.9,
    gravity: 0.05,
    scalingRatio: 10,
    slowDown: 5,
    strongGravityMode: false,
  };
  const out = new Float32Array(n * 2);
  for (let round = 1; round <= rounds; round++) {
    forceAtlas2.assign(graph, { iterations: perRound, settings });
    graph.forEachNode((i, a) => { out[2 * i] = a.x; out[2 * i + 1] = a.y; });
    postMessage({ round, rounds, positions: out });
  }
};
