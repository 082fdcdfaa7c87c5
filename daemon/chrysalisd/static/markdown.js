// A small Markdown renderer that builds DOM nodes and never parses HTML: every piece of a
// bead's text goes in through createTextNode, so markup in a bead (<script>, <img onerror>,
// an iframe) shows as the characters it is. Links keep http(s) and mailto targets only (a
// javascript: or data: link becomes plain text); images are not loaded (their alt text and
// address are shown), so a bead cannot make the page fetch anything.
//
// What it reads: ATX headings (#..######), paragraphs, fenced code (``` or ~~~), "- * +"
// and "1." lists (one level), "> " quotes, horizontal rules, and inline `code`, **bold**,
// *em* / _em_, [text](url) and bare https:// addresses. Anything else is text.
//
// A bead's text may be made to be slow: every inline span is bounded (an opening with no
// close looks ahead at most SPAN characters, not to the end of the paragraph), quotes nest at
// most MAX_DEPTH deep, and past MAX_MARKDOWN characters the text is shown as it is.

const SAFE_URL = /^(https?:\/\/|mailto:)/i;
const MAX_DEPTH = 8;
const MAX_MARKDOWN = 100_000;

function el(tag, cls, ...children) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const c of children) e.append(c);
  return e;
}

// Inline spans of ``text`` as a list of nodes.
export function inline(text) {
  const out = [];
  // code first (nothing inside it is read), then links, bold, emphasis, bare addresses
  const pattern = /(`{1,8})([^`]|[^`][\s\S]{0,1000}?[^`])\1(?!`)|!?\[([^\]\n]{0,500})\]\(([^)\s]{0,2048})\)|\*\*(?=\S)([\s\S]{0,1000}?\S)\*\*|__(?=\S)([\s\S]{0,1000}?\S)__|\*(?=[^\s*])([\s\S]{0,1000}?[^\s*])\*|(?<![\w])_(?=[^\s_])([\s\S]{0,1000}?[^\s_])_(?![\w])|\bhttps?:\/\/[^\s<>()]{0,2048}[^\s<>().,;:!?'"]/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    last = m.index + m[0].length;
    if (m[1]) out.push(el("code", null, m[2]));
    else if (m[0].startsWith("![")) out.push(el("span", "md-image", `[image: ${m[3] || "no description"}] ${m[4]}`));
    else if (m[3] !== undefined) out.push(link(m[3] || m[4], m[4]));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(el("strong", null, ...inline(m[5] ?? m[6])));
    else if (m[7] !== undefined || m[8] !== undefined) out.push(el("em", null, ...inline(m[7] ?? m[8])));
    else out.push(link(m[0], m[0]));
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

function link(label, href) {
  if (!SAFE_URL.test(href)) return document.createTextNode(`${label} (${href})`);
  // A bare address is its own label: read as Markdown again it would match itself, forever.
  const a = el("a", null, ...(label === href ? [label] : inline(label)));
  a.href = href;  // a property, set on an element not in a parsed document: nothing runs
  a.rel = "noopener noreferrer nofollow";
  a.target = "_blank";
  return a;
}

// ``text`` as a DocumentFragment of blocks (``depth``: how many quotes it is inside).
export function render(text, depth = 0) {
  const frag = document.createDocumentFragment();
  text = String(text);
  if (text.length > MAX_MARKDOWN) {
    frag.append(render(text.slice(0, MAX_MARKDOWN), depth), el("p", "md-rest", text.slice(MAX_MARKDOWN)));
    return frag;
  }
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let para = [];
  let list = null;
  const flush = () => {
    if (para.length) frag.append(el("p", null, ...inline(para.join("\n"))));
    para = [];
  };
  const endList = () => { list = null; };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m;
    if ((m = line.match(/^\s{0,3}(```+|~~~+)\s*([\w+-]*)\s*$/))) {
      flush(); endList();
      const fence = m[1], body = [];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith(fence); i++) body.push(lines[i]);
      const code = el("code", null, body.join("\n"));
      if (m[2]) code.dataset.lang = m[2];
      frag.append(el("pre", "md-code", code));
    } else if ((m = line.match(/^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/))) {
      flush(); endList();
      frag.append(el(`h${Math.min(6, m[1].length + 2)}`, "md-h", ...inline(m[2])));
    } else if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush(); endList();
      frag.append(document.createElement("hr"));
    } else if (depth < MAX_DEPTH && (m = line.match(/^\s{0,3}>\s?(.*)$/))) {
      flush(); endList();
      const quoted = [m[1]];
      while (i + 1 < lines.length && (m = lines[i + 1].match(/^\s{0,3}>\s?(.*)$/))) { quoted.push(m[1]); i++; }
      frag.append(el("blockquote", null, render(quoted.join("\n"), depth + 1)));
    } else if ((m = line.match(/^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/))) {
      flush();
      const ordered = /\d/.test(m[1]);
      if (!list || (list.tagName === "OL") !== ordered) {
        list = el(ordered ? "ol" : "ul");
        if (ordered && parseInt(m[1], 10) !== 1) list.start = parseInt(m[1], 10);
        frag.append(list);
      }
      list.append(el("li", null, ...inline(m[2])));
    } else if (line.trim() === "") {
      flush(); endList();
    } else if (list && /^\s{2,}\S/.test(line)) {
      list.lastChild.append(document.createTextNode(" "), ...inline(line.trim()));
    } else {
      endList();
      para.push(line);
    }
  }
  flush();
  return frag;
}

// The first line of ``text`` with inline Markdown, its block markers dropped (for one-line
// rows).
export function summary(text, max = 300) {
  const flat = String(text).replace(/```[\s\S]*?(```|$)/g, " [code] ").replace(/^\s*(#{1,6}|>|[-*+]|\d+[.)])\s+/gm, "")
    .replace(/\s+/g, " ").trim();
  return inline(flat.length > max ? flat.slice(0, max) + " …" : flat);
}
