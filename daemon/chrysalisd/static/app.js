// The memory inspector: plain DOM, no framework, nothing from a CDN. Every text from the
// memory goes in through text nodes (never innerHTML): a bead may hold any markup, and its
// Markdown is rendered by markdown.js, which builds elements and never parses HTML. The
// graph library (vendor/graph.js) is built from the npm registry by scripts/vendor_ui.sh.

import { render, summary } from "./markdown.js";
import { clusters, seed } from "./seed.js";

const view = document.getElementById("view");
const memorySelect = document.getElementById("memory");
const errorBox = document.getElementById("error");
let memory = "default";

// ---- the session ------------------------------------------------------------------------
// Signing in answers this page with the session in a <meta>; it moves to sessionStorage
// (this origin's alone: another port of 127.0.0.1 cannot read it) and leaves the DOM and the
// address bar. It goes out as a header on every API call: a page of another origin cannot
// send that header without a CORS preflight, which the inspector never answers. No cookie.

function takeMeta(name) {
  const el = document.querySelector(`meta[name="${name}"]`);
  if (!el) return null;
  el.remove();
  return el.content;
}

const fresh = takeMeta("chrysalis-session");
if (fresh) sessionStorage.setItem("session", fresh);
const opened = takeMeta("chrysalis-memory");
if (opened) sessionStorage.setItem("memory", opened);
if (location.pathname !== "/") history.replaceState(null, "", "/" + location.hash);
const session = sessionStorage.getItem("session");

// ---- helpers ----------------------------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "onclick" || k === "onsubmit" || k === "oninput") el[k] = v;
    else if (v !== undefined && v !== null) el.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Replace ``el``'s children with ``children`` (nested arrays flattened, null left out).
function fill(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined));
  return el;
}

function api(path) {
  const prefix = memory === "default" ? "/api/v1" : `/api/v1/m/${encodeURIComponent(memory)}`;
  return prefix + path;
}

async function call(method, path, body, whole = api(path)) {
  if (!session) throw new Error("not signed in: run `chrysalis ui` (it opens the inspector in your browser and signs you in)");
  const init = { method, headers: { "x-chrysalis-session": session } };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(whole, init);
  if (r.status === 204) return null;
  const data = await r.json().catch(() => null);
  if (!r.ok) {
    const msg = data && data.error ? data.error.message : `${r.status} ${r.statusText}`;
    throw new Error(msg);
  }
  return data;
}

function showError(err) {
  errorBox.textContent = String(err.message || err);
  errorBox.hidden = false;
}

// "1 bead", "2 beads": a count and its word, never "1 beads".
function counted(n, word, many) {
  return `${n.toLocaleString()} ${n === 1 ? word : many || word + "s"}`;
}

function when(ts) {
  if (ts === null || ts === undefined) return "–";
  const d = new Date(ts * 1000);
  return d.toISOString().replace("T", " ").slice(0, 19);
}

function ago(ts) {
  if (!ts) return "never";
  const s = Math.max(0, Date.now() / 1000 - ts);
  if (s < 60) return `${Math.round(s)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

function go(hash) {
  location.hash = hash;
}

// ---- the views --------------------------------------------------------------------------

const PAGE = 200;  // beads per timeline page

// The local day and hour:minute of a bead (the tooltip has the full UTC time).
function day(ts) {
  const d = new Date(ts * 1000);
  return `${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}`;
}

function clock(ts) {
  const d = new Date(ts * 1000);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

// "notes.md:12-40" for each span a bead was ingested from (the file's name; the path in the
// tooltip).
function spanLabels(spans) {
  return (spans || []).map((s) => h("span", { class: "span", title: s.path },
    `${s.path.split("/").pop()}:${s.start_line}${s.end_line !== s.start_line ? "-" + s.end_line : ""}`));
}

function beadRow(b) {
  const open = () => go(`#bead/${encodeURIComponent(b.id)}`);
  return h("div", { class: "bead", "data-id": b.id, "data-session": b.session_id || "", tabindex: "0", onclick: open },
    h("time", { class: "muted", datetime: new Date(b.ts * 1000).toISOString(), title: when(b.ts) }, clock(b.ts)),
    h("span", { class: `role role-${b.role}` }, b.role),
    h("div", { class: "text md" }, render(b.content.length > 1200 ? b.content.slice(0, 1200) + " …" : b.content)),
    h("div", { class: "where" },
      b.session_id ? h("a", { class: "session", href: `#timeline/${encodeURIComponent(b.session_id)}`, onclick: (e) => e.stopPropagation() }, b.session_id) : null,
      spanLabels(b.span_refs),
      (b.tags || []).map((t) => h("span", { class: "tag" }, t))));
}

// The next float above ``x``: `before` is strict, so asking below nextUp(oldest) also
// returns the beads stamped exactly at the oldest time seen (deduplicated by id).
function nextUp(x) {
  const f = new Float64Array([x]);
  const i = new BigInt64Array(f.buffer);
  i[0] += x >= 0 ? 1n : -1n;
  return f[0];
}

async function timeline(sessionId) {
  const status = await call("GET", "/status");
  const total = status.counts.beads;
  const list = h("div", { class: "beads" });
  const count = h("small", {});
  const more = h("button", { class: "more" }, "Load older beads");
  const seen = new Set();
  let oldest = null, atOldest = 0, done = false, loading = null;
  const days = new Map();
  const filter = sessionId ? `&session_id=${encodeURIComponent(sessionId)}` : "";
  const addBeads = (beads) => {
    for (const b of beads.slice().reverse()) {  // the API answers oldest first
      if (seen.has(b.id)) continue;
      seen.add(b.id);
      const d = day(b.ts);
      let section = days.get(d);
      if (!section) {
        section = h("section", { class: "day", "data-day": d }, h("h3", {}, new Date(b.ts * 1000).toLocaleDateString(undefined, { weekday: "short", year: "numeric", month: "short", day: "numeric" })));
        days.set(d, section);
        list.append(section);
      }
      section.append(beadRow(b));
      if (oldest === null || b.ts < oldest) { oldest = b.ts; atOldest = 0; }
      if (b.ts === oldest) atOldest++;
    }
  };
  const page = async () => {
    if (done) return;
    let limit = PAGE, path = `/beads?limit=${PAGE}${filter}`;
    if (oldest !== null) {
      // the beads seen at the oldest time come back too: ask for that many more
      const ties = atOldest;
      limit = Math.min(1000, PAGE + ties);
      path = `/beads?limit=${limit}&before=${nextUp(oldest)}${filter}`;
    }
    const before = seen.size;
    const beads = await call("GET", path);
    addBeads(beads);
    if (seen.size === before || beads.length < limit) done = true;
    count.textContent = sessionId ? `${counted(seen.size, "bead")} of this session${done ? "" : " so far"}`
      : `${seen.size.toLocaleString()} of ${counted(total, "bead")}, newest first`;
    more.hidden = done;
    list.dataset.loaded = String(seen.size);
  };
  const next = () => {
    if (!loading) loading = page().catch(showError).finally(() => { loading = null; });
    return loading;
  };
  more.onclick = next;
  fill(view,
    h("h2", {}, sessionId ? ["Session ", h("code", {}, sessionId), " "] : "Timeline ", count,
      sessionId ? h("a", { href: "#timeline", class: "clear" }, "all sessions") : null),
    list, h("p", { class: "paging" }, more));
  await next();
  if (seen.size === 0) list.append(h("p", { class: "muted" }, "This memory holds no beads yet."));
  // Scrolling near the end loads the next page, as the button does.
  const watcher = new IntersectionObserver((entries) => {
    if (!more.isConnected) watcher.disconnect();
    else if (entries.some((e) => e.isIntersecting) && !done) next();
  }, { rootMargin: "600px" });
  watcher.observe(more);
}

// Each signal as a short bar, two to a line (its value in the tooltip).
function signalBars(signals) {
  const rows = Object.entries(signals).sort((a, b) => b[1] - a[1]);
  return h("div", { class: "signals" },
    rows.map(([name, value]) => [
      h("span", { title: `${name} ${value.toFixed(3)}` }, name),
      h("div", { class: "bar", title: `${name} ${value.toFixed(3)}` },
        (() => { const s = h("span"); s.style.width = `${Math.max(0, Math.min(1, value)) * 100}%`; return s; })()),
    ]));
}

// Provenance in one line of small print: times read as times, span refs as file:line.
const PROVENANCE_FIRST = ["session_id", "source", "span_refs", "ts", "id"];

function provenance(p) {
  const parts = [];
  const rank = (k) => (PROVENANCE_FIRST.includes(k) ? PROVENANCE_FIRST.indexOf(k) : 99);
  for (const [k, v] of Object.entries(p).sort((a, b) => rank(a[0]) - rank(b[0]))) {
    if (v === null || v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    if (k === "span_refs") { parts.push(h("span", { class: "prov", "data-key": k }, spanLabels(v))); continue; }
    const shown = typeof v === "number" && /(^ts$|_at$|time)/.test(k) ? when(v)
      : typeof v === "object" ? JSON.stringify(v) : String(v);
    parts.push(h("span", { class: "prov", "data-key": k, title: `${k}: ${shown}` }, h("b", {}, k), " ", shown.length > 80 ? shown.slice(0, 80) + "…" : shown));
  }
  return h("div", { class: "provenance" }, parts);
}

async function search(query) {
  const input = h("input", { type: "search", name: "q", placeholder: "What does the memory say about…", value: query || "" });
  const results = h("div", { id: "results" });
  const form = h("form", { class: "search", onsubmit: (e) => {
    e.preventDefault();
    go(`#search/${encodeURIComponent(input.value)}`);
  } }, input, h("button", { type: "submit" }, "Search"));
  fill(view, h("h2", {}, "Search"), form, results);
  input.focus();
  if (!query) return;
  const found = await call("POST", "/retrieve", { query, k: 20 });
  fill(results,
    h("p", { class: "muted" }, `${counted(found.items.length, "item")}, ${counted(found.tokens_used, "token")} (${found.strategy})`,
      found.notes.length ? ` — ${found.notes.join("; ")}` : ""),
    found.items.map((item, n) => h("article", { class: "result", "data-id": item.id },
      h("span", { class: "rank" }, `${n + 1}`),
      h("div", { class: "body" },
        h("div", { class: "text", title: item.kind === "bead" ? "open this bead" : "",
          onclick: () => item.kind === "bead" && go(`#bead/${encodeURIComponent(item.id)}`) },
          h("span", { class: `kind kind-${item.kind}` }, item.kind), " ", summary(item.text, 400)),
        provenance({ id: item.id, ...item.provenance })),
      h("div", { class: "score" }, h("strong", {}, item.score.toFixed(3)), signalBars(item.signals)))));
}

// The memory picker's counts, read again (after a forget, say).
async function refreshMemories() {
  const memories = (await call("GET", "", undefined, "/api/v1/memories")).memories;
  for (const m of memories) {
    const option = [...memorySelect.options].find((o) => o.value === m.name);
    if (option) option.textContent = `${m.name} (${m.beads})`;
  }
}

async function bead(id) {
  let b;
  try {
    b = await call("GET", `/beads/${encodeURIComponent(id)}`);
  } catch (err) {
    if (!/not found|unknown|forgotten/i.test(err.message)) throw err;
    return forgottenBead(id, err.message);
  }
  const receipt = h("div", { id: "receipt" });
  const content = h("div", { class: "content md" }, render(b.content));
  const raw = h("details", { class: "raw" }, h("summary", {}, "the text as stored"), h("pre", {}, b.content));
  const forget = h("button", { class: "danger", onclick: async () => {
    if (!confirm(`Forget this bead everywhere?\n\n${b.content.slice(0, 200)}`)) return;
    forget.disabled = true;
    try {
      await call("DELETE", `/beads/${encodeURIComponent(id)}`);
    } catch (err) { forget.disabled = false; showError(err); return; }
    // What the person sees now is what the memory holds: no text, no button, new counts.
    content.replaceWith(gone());
    raw.remove();
    forget.replaceWith(h("span", { class: "forgotten-note" }, "Forgotten on this laptop."));
    view.querySelector("h2 .state")?.replaceChildren("forgotten");
    refreshMemories().catch(showError);
    await followReceipt(id, receipt);
  } }, "Forget");
  fill(view,
    h("h2", {}, "Bead ", h("small", {}, b.id), " ", h("span", { class: "state" })),
    h("dl", { class: "meta" }, [
      ["time", when(b.ts)], ["role", b.role], ["session", b.session_id || "–"],
      ["source", b.source || "–"], ["importance", b.importance.toFixed(2)],
      ["tags", (b.tags || []).join(", ") || "–"],
      ["derived from", (b.derived_from || []).join(", ") || "–"],
      ["blob", b.blob ? `${b.blob.sha256} (${counted(b.blob.size, "byte")})` : "–"],
    ].map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    (b.span_refs || []).length ? [h("h2", {}, "Where it came from"), h("ul", { class: "spans" },
      b.span_refs.map((s) => h("li", { class: "span", title: s.path },
        `${s.path}:${s.start_line}${s.end_line !== s.start_line ? "-" + s.end_line : ""}`)))] : null,
    h("h2", {}, "Content"),
    content, raw,
    h("p", {}, forget),
    receipt);
}

function gone() {
  return h("p", { class: "content gone" }, "This bead was forgotten: its content has left this laptop. The receipt below says where else it is gone.");
}

async function forgottenBead(id, message) {
  const receipt = h("div", { id: "receipt" });
  fill(view, h("h2", {}, "Bead ", h("small", {}, id), " ", h("span", { class: "state" }, "forgotten")), gone(), receipt);
  try {
    await followReceipt(id, receipt);
  } catch (err) {
    fill(receipt, h("p", { class: "muted" }, message));
  }
}

async function followReceipt(id, box) {
  for (let i = 0; i < 120; i++) {
    const r = await call("GET", `/forget/${encodeURIComponent(id)}`);
    const badge = r.clean ? h("span", { class: "badge clean" }, "clean: gone everywhere")
      : h("span", { class: "badge pending" }, r.settled ? "settled, not clean" : "pending");
    fill(box,
      h("h2", {}, "Forget receipt ", badge),
      h("div", { class: "table-wrap" }, h("table", { class: "receipt" },
        h("tr", {}, h("th", {}, "place"), h("th", {}, "name"), h("th", {}, "state"), h("th", {}, "why")),
        r.places.map((p) => h("tr", { "data-place": p.place },
          h("td", {}, p.place), h("td", {}, p.name),
          h("td", { class: `state-${p.state.replace(" ", "-")}` }, p.state), h("td", {}, p.why))))));
    if (r.clean || r.settled) return;
    await new Promise((ok) => setTimeout(ok, 1000));
    if (!box.isConnected) return;
  }
}
// ---- the graph: WebGL (sigma), laid out by ForceAtlas2 in a worker ------------------------
//
// Fast at thousands of nodes: the daemon sends a compact drawing (GET /v1/kg/graph/draw:
// columns, edges as index pairs, cached by the memory's version, 304 while unchanged); the
// first picture is drawn at once from cheap positions (seed.js: a disc per cluster, on this
// thread), then a worker tidies it with a bounded ForceAtlas2. Level of detail: zoomed out,
// the most connected nodes are drawn and more appear as you zoom in; a found or clicked
// node and its neighbours are always drawn. Node size grows with its facts, labels are
// drawn where they do not collide (sigma's label grid); colours are the entity types (the
// legend hides or shows a type). The time slider hides the facts that did not hold then.
// A node's facts (predicates, evidence) are read when it is chosen.

const TYPE_COLOURS = ["#7a4cc2", "#1a7f52", "#c4320a", "#0e6fb8", "#b54708", "#c11574",
  "#4e5ba6", "#3b7c0f", "#9e2a2b", "#107569"];
const MAX_NODES = 5000;
const FIRST_SHOWN = 1000;  // nodes drawn zoomed out; twice as many per halving of the view
// the layout's bounds: iterations in all (fewer past 2,000 nodes, where each costs more),
// per round (a round's positions are drawn), and no round begins after BUDGET_MS
const ITERATIONS_SMALL = 200, ITERATIONS_BIG = 20, PER_ROUND = 10, BUDGET_MS = 4000;

let graphState = null;  // what the graph view holds, for the page's own handlers and tests
// memory -> { etag, g, xy, settled }: going back to the graph while the memory is unchanged
// costs a 304 and no layout
const drawings = new Map();

async function fetchDrawing() {
  if (!session) throw new Error("not signed in: run `chrysalis ui` (it opens the inspector in your browser and signs you in)");
  const key = memory, cached = drawings.get(key);
  const headers = { "x-chrysalis-session": session };
  if (cached) headers["if-none-match"] = cached.etag;
  const r = await fetch(api(`/kg/graph/draw?limit=${MAX_NODES}`), { headers });
  if (r.status === 304 && cached) return cached;
  const data = await r.json().catch(() => null);
  if (!r.ok) throw new Error(data && data.error ? data.error.message : `${r.status} ${r.statusText}`);
  const fresh = { etag: r.headers.get("etag"), g: data, xy: null, settled: false };
  drawings.set(key, fresh);
  return fresh;
}

async function graph() {
  const [{ Graph, Sigma }, drawing] = await Promise.all([import("./vendor/graph.js"), fetchDrawing()]);
  if (graphState) graphState.kill();
  const g = drawing.g, ids = g.nodes.id, E = g.edges;
  const n = ids.length, m = E.source.length;
  const now = Date.now() / 1000;
  let first = now;
  for (const t of E.valid_at) if (t !== null && t < first) first = t;
  for (const t of E.invalid_at) if (t !== null && t < first) first = t;
  const slider = h("input", { type: "range", name: "as-of", min: String(Math.floor(first)), max: String(Math.ceil(now)), value: String(Math.ceil(now)), step: "60" });
  const asOf = h("output", {}, "hold now");
  const panel = h("aside", { class: "panel", id: "node-panel" }, h("p", { class: "muted" }, "Search a name or click a node to see its facts."));
  const stage = h("div", { class: "kg", role: "img", "aria-label": "knowledge graph" });
  const find = h("input", { type: "search", name: "node", placeholder: "Find an entity…", autocomplete: "off", list: "node-names" });
  const names = h("datalist", { id: "node-names" });
  const legend = h("div", { class: "legend" });
  const progress = h("span", { class: "muted layout-progress" });
  const detail = h("small", { class: "lod muted" });
  const left = g.nodes_total > n ? ` (the ${n.toLocaleString()} most connected of ${g.nodes_total.toLocaleString()})` : "";
  fill(view,
    h("h2", {}, "Knowledge graph ", h("small", {}, `${counted(n, "entity", "entities")}, ${counted(m, "fact")}${left}`), " ", progress),
    n === 0 ? h("p", { class: "muted" }, "No entities yet: the extractor adds them as beads come in.") : null,
    h("div", { class: "graph-tools" },
      h("form", { class: "find", onsubmit: (e) => { e.preventDefault(); focusByName(find.value); } }, find, names, h("button", { type: "submit" }, "Find")),
      h("label", { class: "as-of" }, "facts that ", asOf, slider),
      h("span", { class: "zoom" },
        h("button", { type: "button", title: "zoom in", onclick: () => renderer.getCamera().animatedZoom(1.6) }, "+"),
        h("button", { type: "button", title: "zoom out", onclick: () => renderer.getCamera().animatedUnzoom(1.6) }, "−"),
        h("button", { type: "button", title: "see it all", onclick: () => { choose(null); renderer.getCamera().animatedReset(); } }, "fit"))),
    h("div", { class: "legend-row" }, legend, detail),
    h("div", { class: "graph" }, stage, panel));
  if (n === 0) { view.dataset.layout = "done"; return; }

  // positions: the last layout of this version, else a disc per cluster, computed here
  if (!drawing.xy) drawing.xy = seed(n, clusters(n, E.source, E.target));
  // The model holds what may be drawn: the most connected first, more as one zooms in, and
  // any node found or clicked with its neighbours. The drawing holds everything.
  const model = new Graph({ multi: true, type: "directed", allowSelfLoops: true });
  const colour = g.types.map((_t, i) => TYPE_COLOURS[i % TYPE_COLOURS.length]);
  const few = n < 300;  // room for big dots
  const index = new Map(ids.map((id, i) => [id, i]));
  const offsets = new Int32Array(n + 1), edgesAt = new Int32Array(2 * m);  // the edges at each node
  for (let e = 0; e < m; e++) { offsets[E.source[e] + 1]++; offsets[E.target[e] + 1]++; }
  for (let i = 0; i < n; i++) offsets[i + 1] += offsets[i];
  const next = offsets.slice(0, n);
  for (let e = 0; e < m; e++) { edgesAt[next[E.source[e]]++] = e; edgesAt[next[E.target[e]]++] = e; }
  const inModel = new Uint8Array(n);
  let added = 0;  // nodes 0..added-1 are in the model (others may be, found or clicked)
  const addNode = (i) => {
    if (inModel[i]) return;
    inModel[i] = 1;
    const kind = g.nodes.type[i];
    model.addNode(ids[i], {
      x: drawing.xy[2 * i], y: drawing.xy[2 * i + 1], rank: i,
      size: (few ? 6 : 1.6) + (few ? 2 : 1.4) * Math.sqrt(g.nodes.degree[i]),
      label: g.nodes.name[i] || ids[i], color: colour[kind], kind: g.types[kind],
    });
    for (let k = offsets[i]; k < offsets[i + 1]; k++) {
      const e = edgesAt[k], s = E.source[e], t = E.target[e];
      if (inModel[s] && inModel[t] && !model.hasEdge(`e${e}`)) {
        model.addEdgeWithKey(`e${e}`, ids[s], ids[t], { size: 1, color: "#c5cad3", valid_at: E.valid_at[e], invalid_at: E.invalid_at[e] });
      }
    }
  };
  const neighbours = (i) => {
    const out = [];
    for (let k = offsets[i]; k < offsets[i + 1]; k++) {
      const e = edgesAt[k];
      out.push(E.source[e] === i ? E.target[e] : E.source[e]);
    }
    return out;
  };
  const grow = (level) => { for (; added < level; added++) addNode(added); };
  grow(Math.min(n, FIRST_SHOWN));
  names.append(...ids.slice(0, 2000).map((id, i) => h("option", { value: g.nodes.name[i] || id })));

  const hidden = new Set();  // types switched off in the legend
  let chosen = null, near = new Set(), moment = Number(slider.value);
  let shown = Math.min(n, FIRST_SHOWN);  // the level of detail: nodes of rank below it
  const holds = (a) => (a.valid_at === null || a.valid_at <= moment) && (a.invalid_at === null || a.invalid_at > moment);
  const renderer = new Sigma(model, stage, {
    renderEdgeLabels: false,
    labelDensity: 0.45,
    labelGridCellSize: 110,
    labelRenderedSizeThreshold: 5,
    labelFont: "system-ui, sans-serif",
    labelSize: 12,
    defaultEdgeType: "line",
    zIndex: true,
    // zoomed in, nodes keep their size on screen and move apart; zoomed out, they shrink
    zoomToSizeRatioFunction: (ratio) => Math.max(1, Math.sqrt(ratio)),
    nodeReducer: (id, a) => {
      if (hidden.has(a.kind)) return { ...a, hidden: true };
      if (chosen && id === chosen) return { ...a, highlighted: true, forceLabel: true, zIndex: 2 };
      if (chosen && near.has(id)) return { ...a, forceLabel: true, zIndex: 1 };
      if (a.rank >= shown) return { ...a, hidden: true };
      if (!chosen) return a;
      return { ...a, color: "#e4e7ec", label: "", zIndex: 0 };
    },
    edgeReducer: (id, a) => {
      if (!holds(a)) return { ...a, hidden: true };
      if (!chosen) return a;
      const [s, t] = model.extremities(id);
      if (s === chosen || t === chosen) return { ...a, color: "#7a4cc2", size: 1.6, zIndex: 1 };
      return { ...a, color: "#f2f4f7" };
    },
  });
  const camera = renderer.getCamera();
  const sayDetail = () => {
    stage.dataset.shown = String(shown);
    detail.textContent = shown < n ? `showing the ${shown.toLocaleString()} most connected; zoom in, find or click for the rest` : "";
  };
  // Each halving of the view's width shows four times the area: twice the nodes keeps the
  // picture about as dense. Refreshed only when the level changes, not on every frame.
  camera.on("updated", (state) => {
    let level = FIRST_SHOWN;
    while (level < n && level < FIRST_SHOWN / (state.ratio * state.ratio)) level *= 2;
    level = Math.min(n, level);
    if (level !== shown) { grow(level); shown = level; sayDetail(); renderer.refresh({ skipIndexation: true }); }
  });
  sayDetail();
  renderer.once("afterRender", () => { view.dataset.drawn = String(Math.round(performance.now())); });
  const choose = (id) => {
    chosen = id;
    near = new Set();
    if (id) {
      const i = index.get(id);
      addNode(i);
      for (const j of neighbours(i)) { addNode(j); near.add(ids[j]); }
    }
    stage.dataset.chosen = id || "";
    if (id) showNode(id, panel, (other) => model.hasNode(other) && focus(other)).catch(showError);
    renderer.refresh({ skipIndexation: true });
  };
  // Centre the camera on a node and its neighbours, zoomed to fit them.
  const focus = (id) => {
    choose(id);
    const spots = [id, ...near].map((x) => renderer.getNodeDisplayData(x)).filter(Boolean);
    if (!spots.length) return;
    const xs = spots.map((p) => p.x), ys = spots.map((p) => p.y);
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const ratio = Math.min(1, Math.max(0.04, 1.4 * Math.max(x1 - x0, y1 - y0)));
    camera.animate({ x: (x0 + x1) / 2, y: (y0 + y1) / 2, ratio }, { duration: 400 });
  };
  const focusByName = (text) => {
    const want = text.trim().toLowerCase();
    if (!want) return;
    // every node of the drawing, drawn yet or not; the most connected first
    const label = (i) => (g.nodes.name[i] || ids[i]).toLowerCase();
    let found = ids.findIndex((id, i) => id === want || label(i) === want);
    if (found < 0) found = ids.findIndex((_id, i) => label(i).includes(want));
    if (found >= 0) focus(ids[found]);
    else fill(panel, h("p", { class: "muted" }, `No entity is named like “${text}”.`));
  };
  renderer.on("clickNode", ({ node }) => focus(node));
  renderer.on("clickStage", () => choose(null));
  renderer.on("enterNode", () => { stage.style.cursor = "pointer"; });
  renderer.on("leaveNode", () => { stage.style.cursor = ""; });
  slider.oninput = () => {
    // the slider moves by minutes: its last step is now
    moment = Number(slider.value) > Number(slider.max) - 60 ? now : Number(slider.value);
    asOf.textContent = moment === now ? "hold now" : `held at ${when(moment)}`;
    let held = 0;  // of every fact drawn, shown yet or not
    for (let e = 0; e < m; e++) if (holds({ valid_at: E.valid_at[e], invalid_at: E.invalid_at[e] })) held++;
    stage.dataset.holding = String(held);
    renderer.refresh({ skipIndexation: true });
  };
  slider.oninput();
  const counts = new Map();
  for (const t of g.nodes.type) counts.set(t, (counts.get(t) || 0) + 1);
  fill(legend, g.types.map((t, i) => {
    const box = h("input", { type: "checkbox", checked: "", "data-type": t });
    box.onchange = () => { box.checked ? hidden.delete(t) : hidden.add(t); renderer.refresh({ skipIndexation: true }); };
    const swatch = h("span", { class: "swatch" });
    swatch.style.background = colour[i];
    return h("label", {}, box, swatch, `${t} (${(counts.get(i) || 0).toLocaleString()})`);
  }));

  // the layout, in a worker, bounded; skipped when this version was laid out already
  let worker = null;
  if (drawing.settled || n < 2) {
    view.dataset.layout = "done";
  } else {
    worker = new Worker("/static/layout.js", { type: "module" });
    const iterations = n > 2000 ? ITERATIONS_BIG : ITERATIONS_SMALL;
    worker.postMessage({
      positions: drawing.xy.slice(), sources: Int32Array.from(E.source), targets: Int32Array.from(E.target),
      iterations, perRound: PER_ROUND, budgetMs: BUDGET_MS,
    });
    view.dataset.layout = "running";
    progress.textContent = "laying out…";
    worker.onmessage = ({ data }) => {
      const p = data.positions;
      // one update for all nodes: one refresh, not one per node
      model.updateEachNodeAttributes((_id, a) => {
        a.x = p[2 * a.rank];
        a.y = p[2 * a.rank + 1];
        return a;
      }, { attributes: ["x", "y"] });
      drawing.xy = p;
      progress.textContent = data.last ? "" : `laying out… ${Math.round((100 * data.iterations) / iterations)} %`;
      if (data.last) {
        drawing.settled = true;
        worker.terminate();
        view.dataset.layout = "done";
      }
    };
    worker.onerror = (e) => { showError(new Error(`the layout stopped: ${e.message}`)); view.dataset.layout = "failed"; };
  }
  graphState = {
    model, renderer, focus, focusByName, choose, drawn: n,
    kill: () => { if (worker) worker.terminate(); renderer.kill(); graphState = null; window.chrysalisGraph = null; },
  };
  window.chrysalisGraph = graphState;  // for the console and the browser tests
}

// The chosen node's facts, read from the daemon (the drawing holds no predicates).
async function showNode(id, panel, focus) {
  panel.dataset.node = "";
  panel.dataset.want = id;
  const f = await call("GET", `/kg/nodes/${encodeURIComponent(id)}/edges?limit=200`);
  if (panel.dataset.want !== id || !panel.isConnected) return;  // another node was chosen since
  const n = f.node;
  const name = (x) => f.names[x] || x;
  const facts = f.edges.slice().sort((a, b) => (a.invalid_at !== null) - (b.invalid_at !== null) || a.predicate.localeCompare(b.predicate));
  const entity = (x) => x === id ? h("strong", {}, name(x)) : h("a", { href: "#graph", onclick: (e) => { e.preventDefault(); focus(x); } }, name(x));
  fill(panel,
    h("h2", {}, n.name || n.id, " ", h("small", {}, n.type)),
    h("p", { class: "muted" }, `${counted(f.total, "fact")} · id ${n.id}`, n.derived_by ? ` · derived by ${n.derived_by}` : ""),
    h("ul", { class: "facts" }, facts.map((l) => h("li", { class: l.invalid_at !== null ? "ended" : "" },
      entity(l.source), ` ${l.predicate} `, entity(l.target),
      h("br"),
      h("small", { class: "held" }, `held ${l.valid_at === null ? "since it was recorded" : when(l.valid_at)} → ${l.invalid_at === null ? "now" : when(l.invalid_at)}`),
      (l.evidence || []).length ? [h("br"), h("small", {}, "evidence: "),
        l.evidence.map((e) => [h("a", { href: `#bead/${encodeURIComponent(e)}`, class: "evidence" }, e), " "])] : null))),
    f.total > facts.length ? h("p", { class: "muted" }, `and ${(f.total - facts.length).toLocaleString()} more`) : null);
  panel.dataset.node = id;
}

// ---- the laptops ------------------------------------------------------------------------

async function laptops() {
  const s = await call("GET", "/status");
  const r = s.sync.remote;
  const rows = [
    ["this replica", s.replica_id], ["state digest", s.state_digest],
    ["beads", s.counts.beads.toLocaleString()], ["ops", s.counts.ops.toLocaleString()],
    ["embedder", s.embedder ? `${s.embedder.provider} ${s.embedder.model}` : "none"],
  ];
  const sw = s.index.switch;
  if (sw) {
    rows.push(["switching", `${sw.from.model} → ${sw.to.model}: ${sw.vectors.toLocaleString()} of ` +
      `${counted(sw.items, "item")} embedded (${sw.percent}%); recall searches ${sw.searching}` +
      (sw.note ? `. ${sw.note}` : "")]);
  }
  const parts = [h("h2", {}, "Laptops ", h("small", {}, `memory ${s.memory}`)),
    h("dl", { class: "meta" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))];
  if (!r) {
    parts.push(h("p", { class: "muted" }, "No remote: this memory lives on this laptop only."));
  } else {
    parts.push(
      h("h2", {}, "Remote ", h("small", {}, r.url + (r.encrypted ? " (encrypted)" : ""))),
      h("dl", { class: "meta" }, [
        ["last push", r.last_push.at ? `${ago(r.last_push.at)}, ${r.last_push.ok ? "ok" : "failed: " + r.last_push.error}` : "not yet"],
        ["last pull", r.last_pull.at ? `${ago(r.last_pull.at)}, ${r.last_pull.ok ? "ok" : "failed: " + r.last_pull.error}` : "not yet"],
        ["pending", r.pending_ops === null ? "unknown until the remote answers" :
          `${counted(r.pending_ops, "op")} to push` + (r.reached === false ? " (the remote has not been reached yet)" : "")],
        ["errors in a row", String(r.consecutive_errors)],
        ["stopped", r.stopped || "no"],
      ].map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
      h("h2", {}, "Other laptops"),
      r.peers.length === 0 ? h("p", { class: "muted" }, "None has pushed here yet.") :
        h("div", { class: "table-wrap" }, h("table", { class: "peers" },
          h("tr", {}, ["replica", "host", "lag (ops)", "last seen", ""].map((t) => h("th", {}, t))),
          r.peers.map((p) => h("tr", {}, h("td", {}, p.replica), h("td", {}, p.host || "?"),
            h("td", { class: p.lag ? "warn" : "ok" }, String(p.lag)), h("td", {}, ago(p.last_seen)),
            h("td", { class: "muted" }, p.decommissioned ? "retired" : ""))))),
      problems("Rejected objects", r.rejected.map((x) => `${x.key}: ${x.error}`)),
      problems("Gaps", Object.entries(r.gaps || {}).map(([rep, g]) => `${rep} ops ${g.from}..${g.to}: ${g.why || "waiting for its origin or a snapshot"}`)),
      problems("Tampered objects", (r.tampered || []).map((t) => `${t.key}: ${t.what}`)));
  }
  fill(view, ...parts);
}

function problems(title, lines) {
  return lines.length ? [h("h2", { class: "bad" }, title), h("ul", {}, lines.map((l) => h("li", {}, l)))] : null;
}

// ---- routing ----------------------------------------------------------------------------

async function route() {
  errorBox.hidden = true;
  const [name, ...rest] = location.hash.slice(1).split("/");
  const arg = decodeURIComponent(rest.join("/"));
  const which = name || "timeline";
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === which);
  view.setAttribute("data-view", which);
  view.removeAttribute("data-ready");
  if (which !== "graph" && graphState) graphState.kill();
  try {
    if (which === "search") await search(arg);
    else if (which === "bead") await bead(arg);
    else if (which === "graph") await graph();
    else if (which === "laptops") await laptops();
    else await timeline(arg || null);
  } catch (err) {
    showError(err);
  }
  view.setAttribute("data-ready", which);
}

async function start() {
  const memories = (await call("GET", "", undefined, "/api/v1/memories")).memories;
  const wanted = sessionStorage.getItem("memory");
  memory = memories.some((m) => m.name === wanted) ? wanted : "default";
  fill(memorySelect, ...memories.map((m) => h("option", { value: m.name }, `${m.name} (${m.beads})`)));
  memorySelect.value = memory;
  memorySelect.onchange = () => {
    memory = memorySelect.value;
    sessionStorage.setItem("memory", memory);
    route();
  };
  window.addEventListener("hashchange", route);
  await route();
}

start().catch(showError);
