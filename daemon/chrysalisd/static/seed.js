// The graph's first positions, cheap enough for the page's own thread (about 20 ms at 5,000
// nodes and 10,000 edges), so the first picture already shows groups as groups and the
// layout worker only tidies it:
//
// 1. Label propagation groups nodes that share most of their neighbours, in a few passes
//    over the edges.
// 2. Each group gets its own sunflower disc, the largest in the middle, the others spiralling
//    out by size; a node's place on its disc follows its order (the most connected first,
//    so hubs sit in their group's middle).
//
// Pure functions over typed arrays; app.js and layout.js both import them.

const GOLDEN = Math.PI * (3 - Math.sqrt(5));

// Groups of node positions (0..n-1), largest first; ``sources``/``targets`` are the edges.
export function clusters(n, sources, targets) {
  const count = new Int32Array(n + 1);
  for (let e = 0; e < sources.length; e++) {
    if (sources[e] === targets[e]) continue;
    count[sources[e] + 1]++;
    count[targets[e] + 1]++;
  }
  for (let i = 0; i < n; i++) count[i + 1] += count[i];
  const adjacent = new Int32Array(count[n]);
  const fillAt = count.slice(0, n);
  for (let e = 0; e < sources.length; e++) {
    const s = sources[e], t = targets[e];
    if (s === t) continue;
    adjacent[fillAt[s]++] = t;
    adjacent[fillAt[t]++] = s;
  }
  const label = Int32Array.from({ length: n }, (_, i) => i);
  const votes = new Int32Array(n);  // votes[label] while one node counts; reset after
  const touched = new Int32Array(n);
  for (let pass = 0; pass < 12; pass++) {
    let moved = 0;
    for (let i = 0; i < n; i++) {
      if (count[i] === count[i + 1]) continue;
      let used = 0;
      for (let k = count[i]; k < count[i + 1]; k++) {
        const l = label[adjacent[k]];
        if (votes[l]++ === 0) touched[used++] = l;
      }
      let best = label[i], most = votes[best];
      for (let u = 0; u < used; u++) {
        const l = touched[u], v = votes[l];
        if (v > most || (v === most && l < best)) { best = l; most = v; }
        votes[l] = 0;
      }
      votes[label[i]] = 0;
      if (best !== label[i]) { label[i] = best; moved++; }
    }
    if (!moved) break;
  }
  const groups = new Map();
  for (let i = 0; i < n; i++) {
    if (!groups.has(label[i])) groups.set(label[i], []);
    groups.get(label[i]).push(i);
  }
  return [...groups.values()].sort((a, b) => b.length - a.length || a[0] - b[0]);
}

// Sunflower discs: x, y of node i at [2i], [2i+1].
export function seed(n, groups) {
  const xy = new Float32Array(n * 2);
  const unit = 10;
  let placed = 0;  // area used so far, in nodes
  for (const members of groups) {
    const r = Math.sqrt(placed + members.length / 2) * unit * 1.6;
    const angle = groups.length > 1 ? placed * GOLDEN * 0.37 : 0;
    const cx = placed ? Math.cos(angle) * r : 0, cy = placed ? Math.sin(angle) * r : 0;
    members.forEach((node, k) => {
      const d = Math.sqrt(k + 0.5) * unit * 0.9, a = k * GOLDEN;
      xy[2 * node] = cx + Math.cos(a) * d;
      xy[2 * node + 1] = cy + Math.sin(a) * d;
    });
    placed += members.length;
  }
  return xy;
}
