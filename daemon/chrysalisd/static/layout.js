// The graph's layout, off the page's thread. A module worker of this origin: the CSP's
// 'self' allows it (the library's own worker is built from a blob: address, which the CSP
// refuses).
//
// The page sends the first positions (seed.js: a disc per cluster, already drawn) and the
// edges as index pairs; ForceAtlas2 (Barnes-Hut past a few hundred nodes) tidies them in
// rounds, each round's positions posted back so the picture settles while the page stays
// usable. Bounded twice: at most ``iterations`` in all, and no round starts after
// ``budgetMs`` (a slow machine gets a less tidy picture, not a longer wait). Positions go
// back at most every POST_MS: each picture costs the page a redraw.
import { Graph, forceAtlas2 } from "./vendor/graph.js";

const POST_MS = 800;

onmessage = (event) => {
  const { positions, sources, targets, iterations, perRound, budgetMs } = event.data;
  const n = positions.length / 2;
  const started = performance.now();
  const graph = new Graph({ multi: true, type: "undirected" });
  for (let i = 0; i < n; i++) graph.addNode(i, { x: positions[2 * i], y: positions[2 * i + 1] });
  for (let e = 0; e < sources.length; e++) {
    if (sources[e] !== targets[e]) graph.addEdge(sources[e], targets[e]);
  }
  const settings = {
    ...forceAtlas2.inferSettings(graph),
    barnesHutOptimize: n > 300,
    barnesHutTheta: 0.9,
    gravity: 0.05,
    scalingRatio: 10,
    slowDown: 5,
    strongGravityMode: false,
  };
  let done = 0, posted = started;
  while (done < iterations) {
    const step = Math.min(perRound, iterations - done);
    forceAtlas2.assign(graph, { iterations: step, settings });
    done += step;
    const at = performance.now();
    const last = done >= iterations || at - started > budgetMs;
    // each picture costs the page a redraw: one every POST_MS at most, and the last
    if (!last && at - posted < POST_MS) continue;
    posted = at;
    const out = new Float32Array(n * 2);
    graph.forEachNode((i, a) => { out[2 * i] = a.x; out[2 * i + 1] = a.y; });
    postMessage({ positions: out, iterations: done, last, ms: at - started }, [out.buffer]);
    if (last) break;
  }
};
