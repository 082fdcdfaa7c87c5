// What the inspector takes from the npm registry, bundled into one ES module by
// scripts/vendor_ui.sh: a graph model, a WebGL renderer made for thousands of nodes, and a
// force layout. Nothing else of theirs is exposed.
export { default as Graph } from "graphology";
export { default as Sigma } from "sigma";
export { default as forceAtlas2 } from "graphology-layout-forceatlas2";
