// The memory inspector: plain DOM, no framework, nothing from a CDN. Every text from the
// memory goes in through textContent (never innerHTML): a bead may hold any markup.

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

function svg(tag, attrs = {}, text) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
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
  return `${n} ${n === 1 ? word : many || word + "s"}`;
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

function beadRow(b) {
  return h("div", { class: "bead", "data-id": b.id, onclick: () => go(`#bead/${encodeURIComponent(b.id)}`) },
    h("span", { class: "muted" }, when(b.ts)),
    h("span", { class: "muted" }, b.role),
    h("span", { class: "text" }, b.content.length > 400 ? b.content.slice(0, 400) + " …" : b.content,
      (b.tags || []).map((t) => h("span", { class: "tag" }, t))));
}

async function timeline() {
  const beads = await call("GET", "/beads?limit=300");
  const sessions = new Map();
  for (const b of beads) {
    const key = b.session_id || "(no session)";
    if (!sessions.has(key)) sessions.set(key, []);
    sessions.get(key).push(b);
  }
  const blocks = [...sessions.entries()]
    .map(([name, list]) => [name, list, Math.max(...list.map((b) => b.ts))])
    .sort((a, b) => b[2] - a[2]);
  fill(view,
    h("h2", {}, "Timeline ", h("small", {}, `${counted(beads.length, "latest bead")}, by session`)),
    beads.length === 0 ? h("p", { class: "muted" }, "This memory holds no beads yet.") : null,
    blocks.map(([name, list]) => h("section", { class: "session", "data-session": name },
      h("h2", {}, name, " ", h("small", {}, `${counted(list.length, "bead")}, last ${when(list[0] && Math.max(...list.map((b) => b.ts)))}`)),
      list.sort((a, b) => a.ts - b.ts).map(beadRow))));
}

function signalBars(signals) {
  const rows = Object.entries(signals).sort((a, b) => b[1] - a[1]);
  return h("div", { class: "signals" },
    rows.map(([name, value]) => [
      h("span", {}, name),
      h("div", { class: "bar", title: `${name} ${value.toFixed(3)}` },
        (() => { const s = h("span"); s.style.width = `${Math.max(0, Math.min(1, value)) * 100}%`; return s; })()),
      h("span", { class: "muted" }, value.toFixed(3)),
    ]));
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
  const found = await call("POST", "/retrieve", { query, k: 10 });
  fill(results,
    h("p", { class: "muted" }, `${counted(found.items.length, "item")}, ${counted(found.tokens_used, "token")} (${found.strategy})`,
      found.notes.length ? ` — ${found.notes.join("; ")}` : ""),
    found.items.map((item, n) => h("article", { class: "result", "data-id": item.id },
      h("header", {}, h("strong", {}, `#${n + 1}`), h("span", {}, item.kind), h("span", { class: "muted" }, item.id),
        h("span", {}, `score ${item.score.toFixed(3)}`)),
      h("div", { class: "text", onclick: () => item.kind === "bead" && go(`#bead/${encodeURIComponent(item.id)}`) },
        item.text.length > 600 ? item.text.slice(0, 600) + " …" : item.text),
      signalBars(item.signals),
      h("details", {}, h("summary", {}, "provenance"),
        h("dl", { class: "meta" }, Object.entries(item.provenance).map(([k, v]) =>
          [h("dt", {}, k), h("dd", {}, typeof v === "object" ? JSON.stringify(v) : String(v))]))))));
}

async function bead(id) {
  const b = await call("GET", `/beads/${encodeURIComponent(id)}`);
  const receipt = h("div", { id: "receipt" });
  const forget = h("button", { class: "danger", onclick: async () => {
    if (!confirm(`Forget this bead everywhere?\n\n${b.content.slice(0, 200)}`)) return;
    try {
      await call("DELETE", `/beads/${encodeURIComponent(id)}`);
      forget.disabled = true;
      await followReceipt(id, receipt);
    } catch (err) { showError(err); }
  } }, "Forget");
  const spans = (b.span_refs || []).map((s) => h("li", { class: "span" },
    `${s.path}:${s.start_line}${s.end_line !== s.start_line ? "-" + s.end_line : ""}`));
  fill(view,
    h("h2", {}, "Bead ", h("small", {}, b.id)),
    h("dl", { class: "meta" }, [
      ["time", when(b.ts)], ["role", b.role], ["session", b.session_id || "–"],
      ["source", b.source || "–"], ["importance", b.importance.toFixed(2)],
      ["tags", (b.tags || []).join(", ") || "–"],
      ["derived from", (b.derived_from || []).join(", ") || "–"],
      ["blob", b.blob ? `${b.blob.sha256} (${counted(b.blob.size, "byte")})` : "–"],
    ].map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    spans.length ? [h("h2", {}, "Where it came from"), h("ul", { class: "spans" }, spans)] : null,
    h("h2", {}, "Content"),
    h("pre", { class: "content" }, b.content),
    h("p", {}, forget),
    receipt);
}

async function followReceipt(id, box) {
  for (let i = 0; i < 120; i++) {
    const r = await call("GET", `/forget/${encodeURIComponent(id)}`);
    const badge = r.clean ? h("span", { class: "badge clean" }, "clean: gone everywhere")
      : h("span", { class: "badge pending" }, r.settled ? "settled, not clean" : "pending");
    fill(box,
      h("h2", {}, "Forget receipt ", badge),
      h("table", { class: "receipt" },
        h("tr", {}, h("th", {}, "place"), h("th", {}, "name"), h("th", {}, "state"), h("th", {}, "why")),
        r.places.map((p) => h("tr", {},
          h("td", {}, p.place), h("td", {}, p.name),
          h("td", { class: `state-${p.state.replace(" ", "-")}` }, p.state), h("td", {}, p.why)))));
    if (r.clean || r.settled) return;
    await new Promise((ok) => setTimeout(ok, 1000));
    if (!box.isConnected) return;
  }
}

// ---- the graph: a small force layout, drawn in SVG ---------------------------------------

async function graph() {
  const g = await call("GET", "/kg/graph?limit=300");
  const times = g.edges.flatMap((e) => [e.valid_at, e.invalid_at]).filter((t) => t !== null);
  const now = Date.now() / 1000;
  const first = times.length ? Math.min(...times) : now;
  const slider = h("input", { type: "range", min: String(Math.floor(first)), max: String(Math.ceil(now)), value: String(Math.ceil(now)), step: "1" });
  const asOf = h("span", {}, "hold now");
  const panel = h("div", { class: "panel", id: "node-panel" }, h("p", { class: "muted" }, "Choose a node to see its facts."));
  const picture = svg("svg", { class: "kg", viewBox: "0 0 800 560", role: "img", "aria-label": "knowledge graph" });
  fill(view,
    h("h2", {}, "Knowledge graph ", h("small", {}, `${counted(g.nodes.length, "node")}, ${counted(g.edges.length, "fact")}${g.truncated ? " (the most connected)" : ""}`)),
    g.nodes.length === 0 ? h("p", { class: "muted" }, "No entities yet: the extractor adds them as beads come in.") : null,
    h("label", {}, "facts that ", asOf, " ", slider),
    h("div", { class: "graph" }, picture, panel));
  if (g.nodes.length === 0) return;

  const byId = new Map(g.nodes.map((n, i) => [n.id, { ...n, x: 400 + 220 * Math.cos(i * 2.4), y: 280 + 200 * Math.sin(i * 2.4), vx: 0, vy: 0 }]));
  const links = g.edges.map((e) => ({ ...e, s: byId.get(e.source), t: byId.get(e.target) })).filter((l) => l.s && l.t);
  layout([...byId.values()], links);

  const holds = (e, at) => (e.valid_at === null || e.valid_at <= at) && (e.invalid_at === null || e.invalid_at > at);
  const lineEls = links.map((l) => {
    const line = svg("line", { x1: l.s.x, y1: l.s.y, x2: l.t.x, y2: l.t.y });
    const label = svg("text", { class: "predicate", x: (l.s.x + l.t.x) / 2, y: (l.s.y + l.t.y) / 2 }, l.predicate);
    picture.append(line, label);
    return [l, line, label];
  });
  const draw = () => {
    const at = Number(slider.value);
    asOf.textContent = at >= Math.floor(now) ? "hold now" : `held at ${when(at)}`;
    for (const [l, line, label] of lineEls) {
      const ok = holds(l, at);
      line.setAttribute("class", ok ? "" : "invalid");
      label.style.opacity = ok ? "1" : "0.35";
    }
  };
  slider.oninput = draw;
  for (const n of byId.values()) {
    const circle = svg("circle", { cx: n.x, cy: n.y, r: 9, "data-id": n.id });
    circle.appendChild(svg("title", {}, `${n.name || n.id} (${n.type})`));
    circle.onclick = () => {
      picture.querySelectorAll("circle.chosen").forEach((c) => c.classList.remove("chosen"));
      circle.classList.add("chosen");
      showNode(n, links, panel);
    };
    picture.append(circle, svg("text", { x: n.x + 11, y: n.y + 4 }, n.name || n.id));
  }
  draw();
}

function layout(nodes, links) {
  // Fruchterman-Reingold, a fixed number of rounds: enough for a few hundred nodes.
  const area = 800 * 560, k = Math.sqrt(area / Math.max(1, nodes.length)) * 0.75;
  for (let round = 0, temp = 60; round < 220; round++, temp *= 0.985) {
    for (const a of nodes) { a.vx = 0; a.vy = 0; }
    for (let i = 0; i < nodes.length; i++) {
      for (let j = i + 1; j < nodes.length; j++) {
        const a = nodes[i], b = nodes[j];
        const dx = a.x - b.x || 0.01, dy = a.y - b.y || 0.01, d = Math.hypot(dx, dy);
        const f = (k * k) / d;
        a.vx += (dx / d) * f; a.vy += (dy / d) * f; b.vx -= (dx / d) * f; b.vy -= (dy / d) * f;
      }
    }
    for (const l of links) {
      const dx = l.s.x - l.t.x, dy = l.s.y - l.t.y, d = Math.hypot(dx, dy) || 0.01;
      const f = (d * d) / k;
      l.s.vx -= (dx / d) * f; l.s.vy -= (dy / d) * f; l.t.vx += (dx / d) * f; l.t.vy += (dy / d) * f;
    }
    for (const a of nodes) {
      const d = Math.hypot(a.vx, a.vy) || 1;
      a.x = Math.min(680, Math.max(30, a.x + (a.vx / d) * Math.min(d, temp)));
      a.y = Math.min(540, Math.max(20, a.y + (a.vy / d) * Math.min(d, temp)));
    }
  }
}

function showNode(n, links, panel) {
  const facts = links.filter((l) => l.s === n || l.t === n);
  fill(panel,
    h("h2", {}, n.name || n.id, " ", h("small", {}, n.type)),
    h("p", { class: "muted" }, `id ${n.id}`, n.derived_by ? ` · derived by ${n.derived_by}` : ""),
    h("ul", { class: "facts" }, facts.map((l) => h("li", { class: l.invalid_at !== null ? "muted" : "" },
      `${l.s.name || l.s.id} — ${l.predicate} → ${l.t.name || l.t.id}`,
      h("br"),
      h("small", {}, `held ${l.valid_at === null ? "since it was recorded" : when(l.valid_at)} → ${l.invalid_at === null ? "now" : when(l.invalid_at)}`),
      (l.evidence || []).length ? [h("br"), h("small", {}, "evidence: "),
        l.evidence.map((id) => h("a", { href: `#bead/${encodeURIComponent(id)}`, class: "evidence" }, id + " "))] : null))));
}

// ---- the laptops ------------------------------------------------------------------------

async function laptops() {
  const s = await call("GET", "/status");
  const r = s.sync.remote;
  const rows = [
    ["this replica", s.replica_id], ["state digest", s.state_digest],
    ["beads", s.counts.beads.toLocaleString()], ["ops", s.counts.ops.toLocaleString()],
  ];
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
        h("table", { class: "peers" },
          h("tr", {}, ["replica", "host", "lag (ops)", "last seen", ""].map((t) => h("th", {}, t))),
          r.peers.map((p) => h("tr", {}, h("td", {}, p.replica), h("td", {}, p.host || "?"),
            h("td", { class: p.lag ? "warn" : "ok" }, String(p.lag)), h("td", {}, ago(p.last_seen)),
            h("td", { class: "muted" }, p.decommissioned ? "retired" : "")))),
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
  try {
    if (which === "search") await search(arg);
    else if (which === "bead") await bead(arg);
    else if (which === "graph") await graph();
    else if (which === "laptops") await laptops();
    else await timeline();
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
