/* gradviz interactive view: draws a laid-out autograd graph on a 2D canvas and replays
   its backward passes. The data (positions computed by gradviz's layout in Python)
   sits in the JSON script element beside this one (class gvz-data). The page routes
   each picture's edges when it first shows it (a port of gradviz/graph/routing.py) and
   makes a block's "open" picture from the expanded and collapsed ones.

   Names in the data come from user scripts: they reach the DOM only through
   textContent or SVG text nodes, and the canvas only through fillText. */
(function () {
  "use strict";
  const t0 = performance.now();
  const root = document.currentScript.closest(".gvz-root");
  const data = JSON.parse(root.querySelector("script.gvz-data").textContent);
  const $ = (sel) => root.querySelector(sel);

  // ------------------------------------------------------------------ words
  // Every text the page shows goes through tr("English {name}", {name: value}): the page's
  // language's translation from data.messages (English -> translation, made from
  // gradviz/i18n/gradviz_<lang>.ts, the window's catalog), else the English as written.
  // The texts are listed for the translators in gradviz/i18n/html_texts.py (context
  // HtmlView), which a test holds equal to what this script shows.
  const MESSAGES = new Map(data.messages && typeof data.messages === "object" ? Object.entries(data.messages) : []);
  function tr(text, values) {
    const found = MESSAGES.has(text) ? MESSAGES.get(text) : text;
    if (!values) return found;
    return found.replace(/\{(\w+)\}/g, (m, key) => (Object.prototype.hasOwnProperty.call(values, key) ? String(values[key]) : m));
  }

  // ------------------------------------------------------------------ formatting
  // A port of gradviz/graph/fmt.py (fmt_number, fmt_value, fmt_shape): the one formatter
  // the window, the CLI and the exports print through, so the page reads like them.

  const ELLIPSIS = "\u2026";

  function stripZeros(text) {
    return text.indexOf(".") >= 0 ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
  }

  // Python's format(v, ".Ng").
  function pyG(v, n) {
    if (v === 0) return Object.is(v, -0) ? "-0" : "0";
    const sci = v.toExponential(n - 1);
    const e = Number(sci.slice(sci.indexOf("e") + 1));
    if (e < -4 || e >= n) {
      const mant = stripZeros(sci.slice(0, sci.indexOf("e")));
      const ae = Math.abs(e);
      return mant + "e" + (e < 0 ? "-" : "+") + (ae < 10 ? "0" : "") + ae;
    }
    return stripZeros(v.toFixed(Math.max(0, n - 1 - e)));
  }

  function nonFinite(v) {
    return Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf";
  }

  // Numbers the way a learner reads them: 0.6, 1.2, 1.6094, 0.008, 14.0 (fmt_number).
  function fmtNumber(v, isInt) {
    if (typeof v === "boolean") return v ? "True" : "False";
    if (typeof v !== "number") return String(v);
    if (isInt) return String(v);
    if (!Number.isFinite(v)) return nonFinite(v);
    if (v === 0) return "0.0";
    if (Number.isInteger(v) && Math.abs(v) < 1e15) return v.toFixed(1);
    if (Math.abs(v) >= 1e-4 && Math.abs(v) < 1e6) {
      const text = stripZeros(v.toFixed(4));
      if (text !== "0" && text !== "-0") return text;
    }
    return pyG(v, 4);
  }

  function clip(text, maxChars) {
    if (!maxChars || text.length <= maxChars) return text;
    return text.slice(0, Math.max(1, maxChars - 1)) + ELLIPSIS;
  }

  // fmt.py's _fmt_list: with a budget, as many whole items as fit, then "…".
  function fmtList(value, budget, isInt) {
    const parts = [];
    let used = 2;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      let text;
      if (Array.isArray(item)) text = fmtList(item, budget ? Math.max(budget - used - 5, 6) : 0, isInt);
      else text = fmtNumber(item, isInt);
      if (budget) {
        const sep = parts.length ? 2 : 0;
        const more = i < value.length - 1 ? 3 : 0;
        if (parts.length && used + sep + text.length + more > budget) {
          parts.push(ELLIPSIS);
          break;
        }
        used += sep + text.length;
      }
      parts.push(text);
    }
    return "[" + parts.join(", ") + "]";
  }

  // fmt_value(value, max_chars): a number, nested lists, or torch's summary string.
  function fmtValue(value, maxChars, isInt) {
    maxChars = maxChars || 400;
    if (value === null || value === undefined) return "None";
    let text;
    if (Array.isArray(value)) text = fmtList(value, maxChars, isInt);
    else if (typeof value === "number" || typeof value === "boolean") text = fmtNumber(value, isInt);
    else text = String(value).split(/\s+/).filter(Boolean).join(" ");
    return clip(text, maxChars);
  }

  // Short text for a gradient on an edge (the window's edge labels: 26 characters).
  function formatValue(value, maxChars) {
    return fmtValue(value, maxChars || 26);
  }

  // fmt_shape: [2, 3] -> 2×3; a 0-d tensor reads "scalar".
  function shapeText(shape) {
    if (shape === undefined || shape === null) return "";
    if (!Array.isArray(shape)) return String(shape);
    return shape.length ? shape.join("\u00d7") : tr("scalar");
  }

  function isIntDtype(dtype) {
    return typeof dtype === "string" && /int|bool|long|short|uint/.test(dtype) && !/float|complex/.test(dtype);
  }

  // ------------------------------------------------------------------ DOM helpers

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function table(rows) {
    const t = el("table");
    for (const [key, value, cls] of rows) {
      if (value === undefined || value === null || value === "") continue;
      const tr = el("tr");
      // a long key ("grad out → AccumulateGrad (x)") wraps rather than squeeze its value
      tr.appendChild(el("th", String(key).length > 16 ? "gvz-wrap" : null, key));
      const td = el("td", cls || null);
      if (value instanceof Node) td.appendChild(value);
      else td.textContent = String(value);
      tr.appendChild(td);
      t.appendChild(tr);
    }
    return t;
  }

  function button(text, title, onClick) {
    const b = el("button", null, text);
    b.type = "button";
    if (title) b.title = title;
    b.addEventListener("click", onClick);
    return b;
  }

  // ------------------------------------------------------------------ data

  // Every lookup by a name the snapshot chose (node, group, module, tensor) goes through a
  // Map: in a plain object "constructor", "__proto__" or "toString" would find
  // Object.prototype's members instead of nothing, and a snapshot is untrusted input.
  const asMap = (obj) => new Map(obj && typeof obj === "object" ? Object.entries(obj) : []);
  const nodes = asMap(data.nodes);     // raw node id -> attributes
  const shown = asMap(data.shown);     // drawn id -> {lines, style}
  const groups = asMap(data.groups);   // group id -> {label, module, chain, count, members}
  const passes = data.passes;
  const offsets = data.offsets;        // cursor position where each pass starts; last: the end
  const END = offsets[offsets.length - 1];
  const leaves = data.leaves;
  const tensors = asMap(data.tensors); // variable name -> {value, grad, ...}
  const style = data.style;
  const STYLE_KEYS = Object.keys(style.nodes);
  const EDGE_KINDS = Object.keys(style.edges);
  const PALETTE = style.storage;
  const FONT = '"DejaVu Sans Mono", Menlo, Consolas, "D2Coding", "NanumGothicCoding", monospace';
  const stepIndex = passes.map((p) => {
    const m = new Map();
    p.steps.forEach((s, i) => { if (!m.has(s.node)) m.set(s.node, i); });
    return m;
  });
  const leafByName = new Map(leaves.map((l) => [l.name, l]));
  // attributes as the page reads them: a snapshot's lists and names may be anything
  const listOf = (value) => (Array.isArray(value) ? value : []);
  const varsOf = (a) => listOf(a && a.vars);
  const moduleOf = (a) => (a && typeof a.module === "string" ? a.module : "");
  const inModule = (module, block) => Boolean(module) && (module === block || module.startsWith(block + "."));
  // the block each node is shown in when its block is collapsed: its own module, or, for
  // ops of a snapshot that tags only parameters, the block the page placed it in
  const blockOf = new Map();
  for (const g of groups.values()) {
    if (!g.chain && typeof g.module === "string") for (const m of listOf(g.members)) blockOf.set(m, g.module);
  }
  const inBlock = (id, block) => blockOf.get(id) === block || inModule(moduleOf(nodes.get(id)), block);

  // ------------------------------------------------------------------ edge routing
  // A port of gradviz/graph/routing.py (edge_geometries, edge_path and its router): the
  // page routes a picture's edges when the picture is first shown, as the window and the
  // SVG export route them, and draws each as a polyline through its passes
  // (routing.geometry_polyline). A test runs both on the same boxes and compares.

  const ARROW_LEN = 8, CLEARANCE = 6, PORT_STEP = 14, MAX_PASSES = 64, BAND = 42;
  const ROUTE_BUDGET_MS = 4000;  // past it, a picture's remaining edges are drawn unrouted
  const RADIUS_OF = asMap(style.radius);  // corner radius by node kind (style.corner_radius)

  function sParam(u) {
    let t = u;
    for (let k = 0; k < 6; k++) {
      const f = 1.5 * t * (1 - t) + t * t * t - u;
      t -= f / (1.5 - 3 * t + 3 * t * t);
      t = t < 0 ? 0 : t > 1 ? 1 : t;
    }
    return t;
  }

  function sX(xa, ya, xb, yb, y) {
    if (yb === ya || xa === xb) return xa;
    let u = (y - ya) / (yb - ya);
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    const t = sParam(u);
    return xa + (xb - xa) * t * t * (3 - 2 * t);
  }

  const S_STEPS = 512;
  const S_TABLE = [];
  for (let i = 0; i <= S_STEPS; i++) { const t = sParam(i / S_STEPS); S_TABLE.push(t * t * (3 - 2 * t)); }

  function sXSpan(xa, ya, xb, yb, y0, y1) {
    if (yb === ya || xa === xb) return [xa, xa];
    let u0 = (y0 - ya) / (yb - ya), u1 = (y1 - ya) / (yb - ya);
    if (u0 > u1) { const u = u0; u0 = u1; u1 = u; }
    u0 = u0 < 0 ? 0 : u0 > 1 ? 1 : u0;
    u1 = u1 < 0 ? 0 : u1 > 1 ? 1 : u1;
    const f0 = S_TABLE[Math.trunc(u0 * S_STEPS)] - 1e-9;
    const f1 = S_TABLE[Math.min(S_STEPS, Math.ceil(u1 * S_STEPS))] + 1e-9;
    const xs0 = xa + (xb - xa) * f0, xs1 = xa + (xb - xa) * f1;
    return xs0 <= xs1 ? [xs0, xs1] : [xs1, xs0];
  }

  // the boxes in horizontal bands, each band sorted by left edge (routing.Obstacles);
  // an entry is [left, right, top, bottom, index]
  function obstacles(v, deadline) {
    const rows = new Map();
    let maxW = 0;
    for (let i = 0; i < v.n; i++) {
      const e = [v.x[i] - v.w[i] / 2, v.x[i] + v.w[i] / 2, v.y[i] - v.h[i] / 2, v.y[i] + v.h[i] / 2, i];
      maxW = Math.max(maxW, v.w[i]);
      for (let b = Math.floor(e[2] / BAND); b <= Math.floor(e[3] / BAND); b++) {
        const row = rows.get(b);
        if (row) row.push(e); else rows.set(b, [e]);
      }
    }
    for (const row of rows.values()) row.sort((a, b) => a[0] - b[0]);  // stable
    const from = (row, x) => {  // bisect_left on the left edges
      let lo = 0, hi = row.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (row[mid][0] < x) lo = mid + 1; else hi = mid; }
      return lo;
    };
    const obs = { n: v.n, expired: false };
    obs.query = (x0, x1, y0, y1) => {
      if (obs.expired) return [];
      if (performance.now() > deadline) { obs.expired = true; return []; }
      const reach = x0 - maxW;
      const b0 = Math.floor(y0 / BAND), b1 = Math.floor(y1 / BAND);
      const found = [];
      const seen = b0 === b1 ? null : new Set();
      for (let b = b0; b <= b1; b++) {
        const row = rows.get(b);
        if (!row) continue;
        for (let k = from(row, reach), end = from(row, x1); k < end; k++) {
          const e = row[k];
          if (e[1] > x0 && e[0] < x1 && e[3] > y0 && e[2] < y1 && !(seen && seen.has(e[4]))) {
            if (seen) seen.add(e[4]);
            found.push(e);
          }
        }
      }
      return found;
    };
    return obs;
  }

  function firstHit(obs, s, t, ids, xa, ya, xb, yb) {
    const lo = Math.min(ya, yb), hi = Math.max(ya, yb);
    if (hi - lo < 1e-9) return null;
    const c = CLEARANCE, down = yb > ya;
    const x0 = Math.min(xa, xb) - c, x1 = Math.max(xa, xb) + c;
    const first = Math.floor(lo / BAND), last = Math.floor(hi / BAND);
    const seen = new Set();
    for (let k = 0; k <= last - first; k++) {
      const b = down ? first + k : last - k;
      const s0 = Math.max(lo, b * BAND), s1 = Math.min(hi, (b + 1) * BAND);
      if (s1 <= s0) continue;
      const near = [];
      for (const e of obs.query(x0, x1, s0, s1)) {
        if (seen.has(e[4]) || e[4] === s || e[4] === t) continue;
        seen.add(e[4]);
        const y0 = Math.max(e[2] - c, lo), y1 = Math.min(e[3] + c, hi);
        if (y1 <= y0) continue;
        const [xs0, xs1] = sXSpan(xa, ya, xb, yb, y0, y1);
        if (xs1 <= e[0] - c || xs0 >= e[1] + c) continue;
        near.push([down ? e[2] : -e[3], e[0], ids[e[4]], e, y0, y1]);
      }
      near.sort((p, q) => p[0] - q[0] || p[1] - q[1] || (p[2] < q[2] ? -1 : p[2] > q[2] ? 1 : 0));
      for (const [, , , e, y0, y1] of near) {
        const xs0 = sX(xa, ya, xb, yb, y0), xs1 = sX(xa, ya, xb, yb, y1);
        if (Math.max(xs0, xs1) <= e[0] - c || Math.min(xs0, xs1) >= e[1] + c) continue;
        return e;
      }
    }
    return null;
  }

  function freeX(obs, s, t, want, y0, y1) {
    const c = CLEARANCE;
    const search = (direction) => {
      let x = want;
      for (let k = 0; k < 500; k++) {
        const hits = obs.query(x - c, x + c, y0, y1).filter((e) => e[4] !== s && e[4] !== t);
        if (!hits.length) return x;
        if (direction > 0) x = Math.max(...hits.map((e) => e[1])) + c + 1e-6;
        else x = Math.min(...hits.map((e) => e[0])) - c - 1e-6;
      }
      return x;
    };
    const right = search(1);
    if (right === want) return want;
    const left = search(-1);
    return want - left < right - want ? left : right;
  }

  function routePasses(obs, s, t, ids, x0, y0, x1, y1) {
    const anchors = [[x0, y0], [x1, y1]];
    const c = CLEARANCE;
    let k = 0, passes = 0;
    while (k < anchors.length - 1 && passes < MAX_PASSES) {
      const [xa, ya] = anchors[k], [xb, yb] = anchors[k + 1];
      const hit = firstHit(obs, s, t, ids, xa, ya, xb, yb);
      if (hit === null) { k += 2; continue; }
      let yIn, yOut;
      if (yb > ya) { yIn = Math.max(hit[2] - c, ya); yOut = Math.min(hit[3] + c, yb); }
      else { yIn = Math.min(hit[3] + c, ya); yOut = Math.max(hit[2] - c, yb); }
      const want = sX(xa, ya, xb, yb, (yIn + yOut) / 2);
      const gx = freeX(obs, s, t, want, Math.min(yIn, yOut), Math.max(yIn, yOut));
      anchors.splice(k + 1, 0, [gx, yIn], [gx, yOut]);
      passes += 1;
    }
    return anchors.slice(1, -1);
  }

  // one edge's polyline: its start, its passes (or the U's corners), the arrow's base, the tip
  function edgePolyline(v, obs, span, s, t, srcDx, dstDx, arrow) {
    const acx = v.x[s], acy = v.y[s], aw = v.w[s], ah = v.h[s];
    const bcx = v.x[t], bcy = v.y[t], bw = v.w[t], bh = v.h[t];
    const dy = bcy - acy, threshold = (ah + bh) / 4;
    const alen = arrow ? ARROW_LEN : 0, c = CLEARANCE;
    const routed = obs.n > 0;
    const ends = (pts, bx, by, tx, ty) => {
      if (bx !== tx || by !== ty) pts.push(bx, by);
      pts.push(tx, ty);
      return pts;
    };
    if (dy > threshold || dy < -threshold) {
      const sign = dy > 0 ? 1 : -1;
      const x0 = acx + srcDx, y0 = acy + sign * ah / 2;
      const tx = bcx + dstDx, ty = bcy - sign * bh / 2;
      const by = ty - sign * alen;
      const xl = Math.min(x0, tx), xr = Math.max(x0, tx);
      if (routed) {
        const yl = Math.min(y0, by), yh = Math.max(y0, by);
        if (obs.query(xl - c, xr + c, yl, yh).some((e) => e[4] !== s && e[4] !== t)) {
          const passes = routePasses(obs, s, t, v.ids, x0, y0, tx, by);
          if (passes.length) {
            const pts = [x0, y0];
            for (const p of passes) pts.push(p[0], p[1]);
            return ends(pts, tx, by, tx, ty);
          }
        }
      }
      return ends([x0, y0], tx, by, tx, ty);
    }
    const sign = bcx >= acx ? 1 : -1;
    const x0 = acx + sign * aw / 2, y0 = acy;
    const tx = bcx - sign * bw / 2, ty = bcy;
    const xl = Math.min(x0, tx), xr = Math.max(x0, tx);
    const loY = Math.min(y0, ty) - 2, hiY = Math.max(y0, ty) + 2;
    if (routed) {
      const blockers = obs.query(xl, xr, loY, hiY).filter((e) => e[4] !== s && e[4] !== t);
      if (blockers.length) {  // a U under the row, bottom to bottom (routing._under)
        const ux0 = acx + sign * span[s] / 2, uy0 = acy + ah / 2;
        const utx = bcx, uty = bcy + bh / 2, uby = uty + alen;
        const need = Math.max(...blockers.map((e) => e[3]), uy0, uby) + CLEARANCE;
        const yc = Math.max((need - 0.125 * (uy0 + uby)) / 0.75, Math.max(uy0, uby) + 12);
        return ends([ux0, uy0, ux0, yc, utx, yc], utx, uby, utx, uty);
      }
    }
    const length = Math.hypot(tx - x0, ty - y0) || 1;
    return ends([x0, y0], tx - (tx - x0) / length * alen, ty - (ty - y0) / length * alen, tx, ty);
  }

  // every edge of a picture (routing.edge_geometries): edges sharing a side of a box
  // spread along it, ordered by where their other ends are
  function routeEdges(v) {
    const obs = obstacles(v, performance.now() + ROUTE_BUDGET_MS);
    const span = new Float64Array(v.n);
    for (let i = 0; i < v.n; i++) {
      const kind = v.kinds[i], w = v.w[i], h = v.h[i];
      const r = RADIUS_OF.has(kind) ? RADIUS_OF.get(kind) : h / 2;
      span[i] = Math.max(0, Math.min(0.6 * w, w - (kind === "tensor" ? h : 2 * r)));
    }
    const ports = new Map();  // node * 2 + (side > 0) -> [[x of the other end, order key, edge, end]]
    const port = (node, side, entry) => {
      const key = node * 2 + (side > 0 ? 1 : 0);
      const list = ports.get(key);
      if (list) list.push(entry); else ports.set(key, [entry]);
    };
    v.edges.forEach((e, j) => {
      const s = e[0], t = e[1];
      const dy = v.y[t] - v.y[s], threshold = (v.h[s] + v.h[t]) / 4;
      const order = "('" + v.ids[s] + "', '" + v.ids[t] + "')";
      if (dy > threshold) { port(s, 1, [v.x[t], order, j, 0]); port(t, -1, [v.x[s], order, j, 1]); }
      else if (dy < -threshold) { port(s, -1, [v.x[t], order, j, 0]); port(t, 1, [v.x[s], order, j, 1]); }
    });
    const dx = new Float64Array(2 * v.edges.length);
    for (const [key, entries] of ports) {
      if (entries.length < 2) continue;
      entries.sort((p, q) => p[0] - q[0] || (p[1] < q[1] ? -1 : p[1] > q[1] ? 1 : 0));
      const sp = Math.min(span[key >> 1], PORT_STEP * (entries.length - 1));
      const step = sp / (entries.length - 1);
      entries.forEach((entry, i) => { dx[2 * entry[2] + entry[3]] = -sp / 2 + i * step; });
    }
    v.edges.forEach((e, j) => {
      e[3] = edgePolyline(v, obs, span, e[0], e[1], dx[2 * j], dx[2 * j + 1], e[2] !== "saved");
    });
    return obs.expired;
  }

  // ------------------------------------------------------------------ pictures
  // data.views holds the pictures laid out in Python (everything, modules collapsed,
  // chains collapsed); a block's "open" picture is made here when first asked for: the
  // collapsed picture with the block's box replaced by its nodes as the expanded picture
  // places them, the boxes beside it moved aside and the ones below it moved down.

  const views = data.views.map((v) => ({ ...v }));
  {
    const at = views.findIndex((v) => v.key === "modules");
    const opens = listOf(data.open).map((block) => ({ key: "open:" + block, title: tr("{block} open", { block }), focus: block, lazy: true }));
    if (at >= 0) views.splice(at + 1, 0, ...opens);
  }
  const viewByKey = new Map(views.map((v, i) => [v.key, i]));

  function openPicture(v) {
    const all = views[viewByKey.get("all")], base = views[viewByKey.get("modules")];
    const gid = "g:" + v.focus;
    const allIdx = new Map(all.ids.map((id, i) => [id, i]));
    const members = listOf((groups.get(gid) || {}).members).filter((m) => allIdx.has(m));
    const g = base.ids.indexOf(gid);
    const owners = new Map();
    for (const id of base.ids) {
      const group = groups.get(id);
      if (group) for (const m of group.members) owners.set(m, id);
    }
    // the block as the expanded picture draws it, its top centred where the box's top was
    let mx0 = Infinity, mx1 = -Infinity, my0 = Infinity, my1 = -Infinity;
    for (const m of members) {
      const i = allIdx.get(m);
      mx0 = Math.min(mx0, all.x[i] - all.w[i] / 2); mx1 = Math.max(mx1, all.x[i] + all.w[i] / 2);
      my0 = Math.min(my0, all.y[i] - all.h[i] / 2); my1 = Math.max(my1, all.y[i] + all.h[i] / 2);
    }
    const cx = base.x[g], top = base.y[g] - base.h[g] / 2, bottom = base.y[g] + base.h[g] / 2;
    const left = cx - base.w[g] / 2, right = cx + base.w[g] / 2;
    const half = (mx1 - mx0) / 2, dx = cx - (mx0 + mx1) / 2, dy = top - my0;
    const down = Math.max(0, top + (my1 - my0) - bottom);
    const growL = Math.max(0, left - (cx - half)), growR = Math.max(0, cx + half - right);
    const ids = [], x = [], y = [], w = [], h = [];
    base.ids.forEach((id, i) => {
      if (i === g) {
        for (const m of members) {
          const k = allIdx.get(m);
          ids.push(m); x.push(all.x[k] + dx); y.push(all.y[k] + dy); w.push(all.w[k]); h.push(all.h[k]);
        }
        return;
      }
      let nx = base.x[i], ny = base.y[i];
      if (ny - base.h[i] / 2 >= bottom) ny += down;
      else if (ny + base.h[i] / 2 > top) nx += nx >= cx ? growR : -growL;
      ids.push(id); x.push(nx); y.push(ny); w.push(base.w[i]); h.push(base.h[i]);
    });
    const idx = new Map(ids.map((id, i) => [id, i]));
    // its edges: the collapsed picture's, less the box's, and the members' own, each end
    // shown where it is shown (gradviz.html_view._open_one, which a test holds equal)
    const edges = [], have = new Set();
    const add = (u, t, kind) => {
      const key = u + "\u0000" + t;
      if (have.has(key)) return;
      have.add(key);
      edges.push([idx.get(u), idx.get(t), kind]);
    };
    for (const e of base.edges) if (e[0] !== g && e[1] !== g) add(base.ids[e[0]], base.ids[e[1]], e[2]);
    const touching = new Map();
    for (const e of all.edges) {
      for (const end of [e[0], e[1]]) {
        const list = touching.get(end);
        if (list) list.push(e); else touching.set(end, [e]);
      }
    }
    const shownAs = (id) => { const o = owners.get(id); return o === undefined || o === gid ? id : o; };
    for (const m of members) {
      const k = allIdx.get(m);
      const list = touching.get(k) || [];
      // networkx's order: the edges in, then the edges out
      for (const inward of [true, false]) {
        for (const e of list) {
          if ((e[1] === k) !== inward) continue;
          const u = all.ids[e[0]], t = all.ids[e[1]];
          const gu = shownAs(u), gt = shownAs(t);
          if (gu === gt || have.has(gu + "\u0000" + gt)) continue;
          if (e[2] === "saved" && gu !== u) continue;
          add(gu, gt, e[2]);
        }
      }
    }
    return { key: v.key, title: v.title, focus: v.focus, ids, x, y, w, h, edges };
  }

  // ------------------------------------------------------------------ state

  const canvas = $(".gvz-canvas");
  const ctx = canvas.getContext("2d");
  const stage = $(".gvz-stage");
  const state = {
    view: null,          // the current picture (see loadView)
    s: 1, tx: 0, ty: 0,  // screen = world * s + t (CSS pixels)
    selected: null,      // drawn id in the current view
    cursor: 0,           // position in the backward timeline, 0..END
    picked: null,        // leaf name picked for the plot
    chosen: null,        // the picture picked (a pass with a picture of its own shows that)
    searchHits: [], searchAt: -1, searchText: "",
    flow: null,          // gradients of the current pass, per drawn edge
    labels: [],          // edge labels drawn in the last frame (for tests and a11y)
    frames: 0,
  };

  function loadView(index) {
    if (views[index].lazy) views[index] = openPicture(views[index]);
    const v = views[index];
    const n = v.ids.length;
    if (!v.routed) {
      v.n = n;
      v.kinds = v.ids.map((id) => (nodes.has(id) ? String(nodes.get(id).kind) : "group"));
      v.straight = routeEdges(v);
      v.routed = true;
    }
    const idx = new Map();
    v.ids.forEach((id, i) => idx.set(id, i));
    const owner = new Map();
    for (const id of v.ids) {
      const g = groups.get(id);
      if (g) for (const m of g.members) owner.set(m, id);
    }
    const styleOf = new Uint8Array(n);
    const dashed = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const id = v.ids[i];
      styleOf[i] = Math.max(0, STYLE_KEYS.indexOf(shown.get(id).style));
      const attrs = nodes.get(id);
      dashed[i] = attrs && attrs.freed ? 1 : 0;
    }
    const m = v.edges.length;
    const box = new Float64Array(4 * m);
    const edgeKind = new Uint8Array(m);
    const edgeAt = new Map();
    v.edges.forEach((e, j) => {
      const p = e[3];
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (let i = 0; i < p.length; i += 2) {
        x0 = Math.min(x0, p[i]); x1 = Math.max(x1, p[i]);
        y0 = Math.min(y0, p[i + 1]); y1 = Math.max(y1, p[i + 1]);
      }
      box[4 * j] = x0; box[4 * j + 1] = y0; box[4 * j + 2] = x1; box[4 * j + 3] = y1;
      const k = EDGE_KINDS.indexOf(e[2]);
      edgeKind[j] = k < 0 ? 0 : k;
      edgeAt.set(v.ids[e[0]] + "\u0000" + v.ids[e[1]], j);
    });
    let bx0 = Infinity, by0 = Infinity, bx1 = -Infinity, by1 = -Infinity;
    for (let i = 0; i < n; i++) {
      bx0 = Math.min(bx0, v.x[i] - v.w[i] / 2); bx1 = Math.max(bx1, v.x[i] + v.w[i] / 2);
      by0 = Math.min(by0, v.y[i] - v.h[i] / 2); by1 = Math.max(by1, v.y[i] + v.h[i] / 2);
    }
    if (!n) { bx0 = by0 = 0; bx1 = by1 = 100; }
    state.view = {
      index, key: v.key, title: v.title, focus: v.focus, n, ids: v.ids, idx, owner,
      x: v.x, y: v.y, w: v.w, h: v.h, styleOf, dashed,
      edges: v.edges, box, edgeKind, edgeAt, bounds: [bx0, by0, bx1, by1], straight: v.straight,
    };
  }

  const shownId = (rawId) => (state.view.owner.get(rawId) || rawId);

  // ------------------------------------------------------------------ timeline

  function passAt(p) {
    for (let k = 0; k < passes.length; k++) if (p < offsets[k + 1]) return k;
    return passes.length;
  }

  function place(p) {
    const k = passAt(p);
    return { k, s: k < passes.length ? p - offsets[k] : 0 };
  }

  // Gradients the current pass has sent so far, on the edges of the current picture.
  function computeFlow() {
    const { k, s } = place(state.cursor);
    const flow = { edges: new Map(), executed: new Set(), executing: null, k, s };
    state.flow = flow;
    if (k >= passes.length) return flow;
    const steps = passes[k].steps;
    for (let j = 0; j < s; j++) {
      const step = steps[j];
      const u = shownId(step.node);
      flow.executed.add(u);
      if (j === s - 1) flow.executing = u;
      step.targets.forEach((t, i) => {
        if (t === null || t === undefined) return;
        const v = shownId(t);
        if (u === v) return;
        const e = state.view.edgeAt.get(u + "\u0000" + v);
        if (e === undefined) return;
        flow.edges.set(e, { value: step.out[i], current: j === s - 1 });
      });
    }
    state.flow = flow;
    return flow;
  }

  function leafValue(leaf, p) {
    let value = null, what = "", at = -1;
    for (const [pos, v, w] of leaf.changes) {
      if (pos > p) break;
      value = v; what = w; at = pos;
    }
    return { value, what, at, known: at >= 0 };
  }

  // ------------------------------------------------------------------ camera

  // The stage's size, read on resize only: reading clientWidth after the panels
  // changed would force a layout of the whole page on every step.
  let stageSize = null;
  function size() {
    if (!stageSize) stageSize = { W: stage.clientWidth, H: stage.clientHeight };
    return stageSize;
  }

  function fit() {
    const [x0, y0, x1, y1] = state.view.bounds;
    const { W, H } = size();
    placed = W > 0 && H > 0;
    const s = Math.min(1.5, 0.94 * Math.min(W / Math.max(1, x1 - x0), H / Math.max(1, y1 - y0)));
    state.s = s;
    state.tx = W / 2 - s * (x0 + x1) / 2;
    state.ty = H / 2 - s * (y0 + y1) / 2;
    redraw();
  }

  // The first picture: the whole width, from the top (where the backward pass starts)
  // when the graph is too tall to read at fit-all zoom.
  // Whether the camera was ever placed on a stage with a size: a page loaded hidden
  // (a notebook output collapsed at load, a tab not shown) is 0x0 then, and its first
  // picture is placed again when it first gets a size (it read zoom 0% otherwise).
  let placed = false;

  function home() {
    const [x0, y0, x1, y1] = state.view.bounds;
    const { W, H } = size();
    placed = W > 0 && H > 0;
    const all = 0.94 * Math.min(W / Math.max(1, x1 - x0), H / Math.max(1, y1 - y0));
    const s = Math.max(all, Math.min(1.2, 0.94 * W / Math.max(1, x1 - x0)));
    state.s = s;
    state.tx = W / 2 - s * (x0 + x1) / 2;
    state.ty = (y1 - y0) * s > H ? 16 - s * y0 : H / 2 - s * (y0 + y1) / 2;
    redraw();
  }

  function minScale() {
    const [x0, y0, x1, y1] = state.view.bounds;
    const { W, H } = size();
    return Math.min(0.05, 0.25 * Math.min(W / Math.max(1, x1 - x0), H / Math.max(1, y1 - y0)));
  }

  function zoomAt(factor, sx, sy) {
    const s = Math.max(minScale(), Math.min(6, state.s * factor));
    const f = s / state.s;
    state.tx = sx - (sx - state.tx) * f;
    state.ty = sy - (sy - state.ty) * f;
    state.s = s;
    redraw();
  }

  function centerOn(i, minZoom) {
    const { W, H } = size();
    if (minZoom && state.s < minZoom) state.s = minZoom;
    state.tx = W / 2 - state.s * state.view.x[i];
    state.ty = H / 2 - state.s * state.view.y[i];
    redraw();
  }

  function onScreen(i) {
    const v = state.view, { W, H } = size();
    const sx = v.x[i] * state.s + state.tx, sy = v.y[i] * state.s + state.ty;
    return sx > 20 && sx < W - 20 && sy > 20 && sy < H - 20;
  }

  // ------------------------------------------------------------------ drawing

  let pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  }

  function resize() {
    const dpr = window.devicePixelRatio || 1;
    const { W, H } = size();
    canvas.width = Math.max(1, Math.round(W * dpr));
    canvas.height = Math.max(1, Math.round(H * dpr));
  }

  function roundRect(x, y, w, h, r) {
    r = Math.min(r, w / 2, h / 2);
    ctx.moveTo(x + r, y);
    ctx.arcTo(x + w, y, x + w, y + h, r);
    ctx.arcTo(x + w, y + h, x, y + h, r);
    ctx.arcTo(x, y + h, x, y, r);
    ctx.arcTo(x, y, x + w, y, r);
    ctx.closePath();
  }

  const RADIUS = asMap(style.radius);
  function radius(i) {
    const key = STYLE_KEYS[state.view.styleOf[i]];
    return RADIUS.has(key) ? RADIUS.get(key) : state.view.h[i] / 2;
  }

  function nodePath(i, detailed) {
    const v = state.view;
    const x = v.x[i] - v.w[i] / 2, y = v.y[i] - v.h[i] / 2;
    if (detailed) roundRect(x, y, v.w[i], v.h[i], radius(i));
    else ctx.rect(x, y, v.w[i], v.h[i]);
  }

  function polyline(p) {
    ctx.moveTo(p[0], p[1]);
    for (let i = 2; i < p.length; i += 2) ctx.lineTo(p[i], p[i + 1]);
  }

  function arrow(p, size) {
    const n = p.length;
    const x1 = p[n - 2], y1 = p[n - 1], x0 = p[n - 4], y0 = p[n - 3];
    const len = Math.hypot(x1 - x0, y1 - y0) || 1;
    const ux = (x1 - x0) / len, uy = (y1 - y0) / len;
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - size * ux + size * 0.5 * uy, y1 - size * uy - size * 0.5 * ux);
    ctx.lineTo(x1 - size * ux - size * 0.5 * uy, y1 - size * uy + size * 0.5 * ux);
    ctx.closePath();
  }

  // The point a fraction t along a polyline's length.
  function pointAlong(p, t) {
    let total = 0;
    for (let i = 2; i < p.length; i += 2) total += Math.hypot(p[i] - p[i - 2], p[i + 1] - p[i - 1]);
    let left = total * t;
    for (let i = 2; i < p.length; i += 2) {
      const seg = Math.hypot(p[i] - p[i - 2], p[i + 1] - p[i - 1]);
      if (seg >= left && seg > 0) {
        const f = left / seg;
        return [p[i - 2] + f * (p[i] - p[i - 2]), p[i - 1] + f * (p[i + 1] - p[i - 1])];
      }
      left -= seg;
    }
    return [p[0], p[1]];
  }

  function draw() {
    const v = state.view;
    const dpr = window.devicePixelRatio || 1;
    const { W, H } = size();
    if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) resize();
    const s = state.s;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = style.background;
    ctx.fillRect(0, 0, W, H);
    ctx.setTransform(dpr * s, 0, 0, dpr * s, dpr * state.tx, dpr * state.ty);
    // the visible world rectangle, with a margin for labels
    const m = 30 / s;
    const wx0 = -state.tx / s - m, wy0 = -state.ty / s - m;
    const wx1 = (W - state.tx) / s + m, wy1 = (H - state.ty) / s + m;
    const flow = state.flow || computeFlow();
    const detailed = s * 20 >= 6;
    const arrows = s * 8 >= 2.5;
    const lw = Math.max(1.2, 0.6 / s);

    // edges, batched by kind
    const visibleEdges = [];
    for (let j = 0; j < v.edges.length; j++) {
      const b = v.box;
      if (b[4 * j + 2] < wx0 || b[4 * j] > wx1 || b[4 * j + 3] < wy0 || b[4 * j + 1] > wy1) continue;
      visibleEdges.push(j);
    }
    ctx.lineWidth = lw;
    for (let k = 0; k < EDGE_KINDS.length; k++) {
      const kind = EDGE_KINDS[k];
      const colour = style.edges[kind];
      ctx.strokeStyle = colour;
      ctx.fillStyle = colour;
      ctx.setLineDash(kind === "saved" && detailed ? [5, 3] : []);
      ctx.beginPath();
      for (const j of visibleEdges) if (v.edgeKind[j] === k && !flow.edges.has(j)) polyline(v.edges[j][3]);
      ctx.stroke();
      ctx.setLineDash([]);
      if (arrows) {
        ctx.beginPath();
        for (const j of visibleEdges) if (v.edgeKind[j] === k && !flow.edges.has(j)) arrow(v.edges[j][3], 8);
        ctx.fill();
      }
    }
    // edges carrying gradient in the current pass: red, bold for the current step
    for (const current of [false, true]) {
      ctx.strokeStyle = style.backward;
      ctx.fillStyle = style.backward;
      ctx.globalAlpha = current ? 1 : 0.55;
      ctx.lineWidth = (current ? 2.6 : 1.8) * Math.max(1, 0.6 / s);
      ctx.beginPath();
      for (const [j, f] of flow.edges) if (f.current === current) polyline(v.edges[j][3]);
      ctx.stroke();
      ctx.beginPath();
      for (const [j, f] of flow.edges) if (f.current === current) arrow(v.edges[j][3], 9);
      ctx.fill();
    }
    ctx.globalAlpha = 1;

    // nodes, batched by style
    const visible = [];
    for (let i = 0; i < v.n; i++) {
      const hw = v.w[i] / 2, hh = v.h[i] / 2;
      if (v.x[i] + hw < wx0 || v.x[i] - hw > wx1 || v.y[i] + hh < wy0 || v.y[i] - hh > wy1) continue;
      visible.push(i);
    }
    ctx.lineWidth = Math.max(1.2, 0.5 / s);
    for (let k = 0; k < STYLE_KEYS.length; k++) {
      const [fill, stroke] = style.nodes[STYLE_KEYS[k]];
      for (const dashed of [0, 1]) {
        ctx.beginPath();
        let any = false;
        for (const i of visible) {
          if (v.styleOf[i] !== k || v.dashed[i] !== dashed) continue;
          nodePath(i, detailed);
          any = true;
        }
        if (!any) continue;
        ctx.fillStyle = fill;
        ctx.fill();
        if (s * 20 >= 3) {
          ctx.strokeStyle = stroke;
          ctx.setLineDash(dashed && detailed ? [4, 3] : []);
          ctx.stroke();
          ctx.setLineDash([]);
        }
      }
    }
    // backward state and selection on top
    const idx = v.idx;
    const mark = (id, fill, stroke, width) => {
      const i = idx.get(id);
      if (i === undefined) return;
      ctx.beginPath();
      nodePath(i, detailed);
      if (fill) { ctx.fillStyle = fill; ctx.fill(); }
      ctx.strokeStyle = stroke;
      ctx.lineWidth = width * Math.max(1, 0.6 / s);
      ctx.stroke();
    };
    for (const id of flow.executed) if (id !== flow.executing) mark(id, style.backward_done_fill, style.backward, 1.3);
    if (flow.executing) mark(flow.executing, style.backward_fill, style.backward, 3);
    if (state.selected) mark(state.selected, null, style.selection, 3);

    // text: only when it can be read
    const textOn = s * 12 >= 5 && visible.length < 4000;
    if (textOn) {
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      const lh = style.line_height;
      for (const i of visible) {
        const id = v.ids[i];
        const drawn = shown.get(id);
        const lines = drawn.lines;
        const saved = drawn.style === "saved";
        const top = v.y[i] - (lines.length - 1) * lh / 2;
        for (let l = 0; l < lines.length; l++) {
          ctx.font = (l === 0 && !saved ? "bold " : "") + "12px " + FONT;
          ctx.fillStyle = l === 0 ? "#000000" : "#444444";
          ctx.fillText(lines[l], v.x[i], top + l * lh);
        }
      }
    }
    // gradients on the edges of the current pass: the current step's first, then the
    // earlier ones where they do not cover another label
    state.labels = [];
    if (flow.edges.size && s * 11 >= 5) {
      ctx.font = "11px " + FONT;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      const placed = [];
      const free = (r) => placed.every((q) => r[0] >= q[2] || r[2] <= q[0] || r[1] >= q[3] || r[3] <= q[1]);
      const order = [...flow.edges].sort((a, b) => Number(b[1].current) - Number(a[1].current));
      for (const [j, f] of order) {
        const b = v.box;
        if (b[4 * j + 2] < wx0 || b[4 * j] > wx1 || b[4 * j + 3] < wy0 || b[4 * j + 1] > wy1) continue;
        const text = formatValue(f.value);
        const tw = ctx.measureText(text).width + 8;
        let at = null;
        for (const t of [0.5, 0.68, 0.32, 0.82]) {
          const [mx, my] = pointAlong(v.edges[j][3], t);
          const rect = [mx - tw / 2 - 2, my - 10, mx + tw / 2 + 2, my + 10];
          if (free(rect)) { at = [mx, my, rect]; break; }
        }
        if (!at) {
          if (!f.current) continue;
          const [mx, my] = pointAlong(v.edges[j][3], 0.5);
          at = [mx, my, [mx - tw / 2, my - 8, mx + tw / 2, my + 8]];
        }
        const [mx, my, rect] = at;
        placed.push(rect);
        ctx.fillStyle = f.current ? "#ffffff" : "rgba(255,255,255,0.85)";
        ctx.strokeStyle = style.backward;
        ctx.lineWidth = 1;
        ctx.beginPath();
        roundRect(mx - tw / 2, my - 8, tw, 16, 4);
        ctx.fill();
        ctx.stroke();
        ctx.fillStyle = style.backward;
        ctx.fillText(text, mx, my);
        state.labels.push({ source: v.ids[v.edges[j][0]], target: v.ids[v.edges[j][1]], text, current: f.current });
      }
    }
    state.frames++;
    const boxes = { n: v.n.toLocaleString("en-US") }, edgeCount = { n: v.edges.length.toLocaleString("en-US") };
    const hud = [
      v.n === 1 ? tr("{n} box", boxes) : tr("{n} boxes", boxes),
      v.edges.length === 1 ? tr("{n} edge", edgeCount) : tr("{n} edges", edgeCount),
      tr("zoom {zoom}%", { zoom: s < 0.1 ? (s * 100).toFixed(1) : Math.round(s * 100) }),
    ];
    if (!textOn) hud.push(tr("zoom in for labels"));
    if (v.straight) hud.push(tr("some edges drawn unrouted (routing ran past its time)"));
    $(".gvz-hud").textContent = hud.join(" \u00b7 ");
  }

  // ------------------------------------------------------------------ hit testing

  function hit(sx, sy) {
    const v = state.view;
    const wx = (sx - state.tx) / state.s, wy = (sy - state.ty) / state.s;
    const slack = 3 / state.s;  // a few pixels of grace for tiny boxes
    let best = -1, bestD = Infinity;
    for (let i = 0; i < v.n; i++) {
      const dx = Math.abs(wx - v.x[i]) - v.w[i] / 2, dy = Math.abs(wy - v.y[i]) - v.h[i] / 2;
      if (dx > slack || dy > slack) continue;
      const d = Math.max(dx, dy);
      if (d < bestD) { bestD = d; best = i; }
    }
    return best < 0 ? null : v.ids[best];
  }

  // ------------------------------------------------------------------ panels

  function passTitle(k) {
    const p = passes[k];
    const st = p.statement;
    let where = st ? st.source : "";
    if (st && st.line && typeof st.iteration === "number") where = tr("{source} (line {line}, iteration {n})", { source: st.source, line: st.line, n: st.iteration });
    else if (st && st.line) where = tr("{source} (line {line})", { source: st.source, line: st.line });
    return { head: p.title, where };
  }

  function stepSentence(step, pass) {
    // A pass of a training loop ran on its own iteration's graph, which the page does
    // not hold (it shows the last one): its nodes are named by what the pass recorded
    // of them, never by an internal id ("fn20 received").
    const recorded = (id) => (pass ? listOf(pass.steps).find((st) => st.node === id) : null);
    const name = (id) => {
      const a = nodes.get(id);
      if (a) {
        const vars = varsOf(a).length ? " (" + varsOf(a).join(", ") + ")" : "";
        return (a.label || id) + vars;
      }
      const st = recorded(id);
      if (st) {
        const vars = listOf(st.vars).length ? " (" + listOf(st.vars).join(", ") + ")" : "";
        return st.label + vars;
      }
      return tr("a node of this pass's own graph");
    };
    const parts = [];
    step.targets.forEach((t, i) => {
      if (t === null || t === undefined) return;
      parts.push(formatValue(step.out[i]) + " \u2192 " + name(t));
    });
    const said = { node: name(step.node), grads: step.in.map((g) => formatValue(g)).join(", ") };
    if (parts.length) return tr("{node} received {grads} and sends {sends}", { ...said, sends: parts.join("; ") });
    if (step.label === "AccumulateGrad") return tr("{node} received {grads} and adds it into .grad", said);
    return tr("{node} received {grads}", said);
  }

  function renderStatus() {
    const box = $(".gvz-status");
    clear(box);
    const { k, s } = place(state.cursor);
    const K = passes.length;
    root.querySelectorAll(".gvz-controls button").forEach((b) => {
      const back = ["start", "step-back", "pass-back"].includes(b.dataset.act);
      b.disabled = back ? state.cursor <= 0 : state.cursor >= END;
    });
    if (!K) {
      box.appendChild(el("div", "gvz-muted", tr("No backward pass was recorded: there is nothing to replay.")));
      return;
    }
    const counter = el("div", "gvz-mono");
    if (k >= K) {
      counter.textContent = tr("after pass {k} of {n}", { k: K, n: K });
      box.appendChild(counter);
      box.appendChild(el("div", null, tr("The end: every pass has run; .grad holds what was saved.")));
    } else {
      const p = passes[k];
      const t = passTitle(k);
      counter.textContent = tr("pass {k} of {n} \u00b7 step {step} of {steps}", { k: k + 1, n: K, step: s, steps: p.steps.length });
      box.appendChild(counter);
      const head = el("div");
      head.appendChild(el("b", null, t.head));
      if (t.where) head.appendChild(el("span", "gvz-mono", " " + t.where));
      head.appendChild(el("span", "gvz-muted", p.kind === "backward" ? " \u00b7 retain_graph=" + (p.retain_graph ? "True" : "False") : ""));
      box.appendChild(head);
      // an earlier pass of a loop ran over its own graph, not the last one drawn
      if (p.view && state.view.key === p.view) {
        box.appendChild(el("div", "gvz-note", tr("Drawn from what this pass recorded: the graph it ran over was freed before the last one was built, which the other pictures show.")));
      } else if (p.foreign && !p.view) {
        box.appendChild(el("div", "gvz-note", tr("This pass ran over an earlier graph, which the page does not hold: it is replayed on the last graph, where only the nodes both share light up.")));
      }
      if (p.error && !p.steps.length) {
        box.appendChild(el("div", "gvz-error", tr("Failed: {error}", { error: p.error })));
        if (p.explanation) box.appendChild(el("div", "gvz-explain", p.explanation));
      } else if (s === 0) {
        box.appendChild(el("div", "gvz-muted", tr("Ready: \u25B6 (or \u2192) runs its first engine step.")));
      } else {
        box.appendChild(el("div", "gvz-now", stepSentence(p.steps[s - 1], p)));
        if (s === p.steps.length) {
          const done = [];
          for (const leaf of leaves) {
            const lv = leafValue(leaf, state.cursor);
            if (lv.known && lv.what === p.title) done.push(leaf.name + ".grad = " + fmtValue(lv.value, 60));
          }
          let text = tr("Pass done.");
          if (done.length) {
            let grads = done.slice(0, 3).join(", ");
            if (done.length > 3) grads = tr("{grads}, \u2026 ({n} leaves)", { grads, n: done.length });
            text = tr("Pass done. {grads}", { grads });
          }
          box.appendChild(el("div", null, text));
          if (p.error) box.appendChild(el("div", "gvz-error", tr("Then failed: {error}", { error: p.error })));
          if (p.error && p.explanation) box.appendChild(el("div", "gvz-explain", p.explanation));
        }
      }
    }
    const sel = $(".gvz-pass");
    sel.value = String(Math.min(k, K));
  }

  function leafOf(id) {
    if (!id) return null;
    const a = nodes.get(id);
    if (!a) return null;
    for (const name of varsOf(a)) {
      const leaf = leafByName.get(name);
      if (leaf && (leaf.acc === id || leaf.tensor === id)) return leaf;
    }
    return null;
  }

  // The leaf table is built once; a step only rewrites the cells whose value changed.
  let gradRows = null;
  function buildGradTable() {
    const box = $(".gvz-grad-table");
    clear(box);
    gradRows = [];
    if (!leaves.length) {
      box.appendChild(el("div", "gvz-muted", tr("No leaf received a gradient.")));
      return;
    }
    const t = el("table");
    const hr = el("tr");
    [tr("leaf"), tr(".grad now"), tr("after")].forEach((h) => hr.appendChild(el("th", null, h)));
    t.appendChild(hr);
    for (const leaf of leaves) {
      const tr = el("tr");
      tr.dataset.leaf = leaf.name;
      const nameCell = el("td", "gvz-mono gvz-leaf-name", leaf.name);
      nameCell.title = leaf.name;
      const now = el("td", "gvz-mono gvz-grad-now");
      const after = el("td", "gvz-muted gvz-grad-after");
      tr.appendChild(nameCell);
      tr.appendChild(now);
      tr.appendChild(after);
      tr.addEventListener("click", () => {
        state.picked = leaf.name;
        const target = leaf.acc || leaf.tensor;
        if (target) select(shownId(target), true);
        else renderPanels();
      });
      t.appendChild(tr);
      gradRows.push({ leaf, tr, now, after, at: null });
    }
    box.appendChild(t);
  }

  function renderGrads() {
    if (gradRows === null) buildGradTable();
    for (const row of gradRows) {
      const lv = leafValue(row.leaf, state.cursor);
      if (row.at !== lv.at) {
        row.at = lv.at;
        row.now.textContent = lv.known ? fmtValue(lv.value, 80) : "None";
        row.now.title = lv.known ? fmtValue(lv.value, 2000) : "";
        row.after.textContent = lv.known ? lv.what : "\u2013";
      }
      row.tr.classList.toggle("gvz-changed", lv.known && lv.at === state.cursor);
      row.tr.classList.toggle("gvz-picked", state.picked === row.leaf.name);
    }
    let plotted;
    if (state.picked && leafByName.has(state.picked)) plotted = [leafByName.get(state.picked)];
    else if (leafOf(state.selected)) plotted = [leafOf(state.selected)];
    else plotted = leaves.slice(0, leaves.length <= 4 ? 4 : 1);
    renderPlot(plotted);
  }

  function renderPlot(plotted) {
    const box = $(".gvz-plot");
    clear(box);
    const points = plotted.map((l) => l.points.filter((p) => p.y !== null));
    const count = Math.max(0, ...points.map((p) => p.length));
    if (!count) {
      box.appendChild(el("div", "gvz-muted", plotted.length ? tr("No plottable .grad history (summaries of big tensors).") : ""));
      return;
    }
    // An SVG element made by the parser carries the SVG namespace, so no namespace URI is written here.
    const holder = el("div");
    holder.innerHTML = "<svg viewBox=\"0 0 320 130\" preserveAspectRatio=\"none\"></svg>";
    const svg = holder.firstChild;
    const NS = svg.namespaceURI;
    const make = (tag, attrs, text) => {
      const node = document.createElementNS(NS, tag);
      for (const key in attrs) node.setAttribute(key, attrs[key]);
      if (text !== undefined) node.textContent = text;
      svg.appendChild(node);
      return node;
    };
    const norm = points.flat().some((p) => p.norm);
    const names = plotted.map((l) => l.name).join(", ");
    box.appendChild(el("div", "gvz-muted gvz-plot-title",
      norm ? tr("\u2016.grad\u2016 (norm) after each event: {names}", { names }) : tr(".grad after each event: {names}", { names })));
    const ys = points.flat().map((p) => p.y);
    let lo = Math.min(0, ...ys), hi = Math.max(0, ...ys);
    if (hi === lo) hi = lo + 1;
    const L = 40, R = 312, T = 8, B = 112;
    const X = (i) => (count === 1 ? (L + R) / 2 : L + (R - L) * i / (count - 1));
    const Y = (y) => B - (B - T) * (y - lo) / (hi - lo);
    make("line", { x1: L, y1: B, x2: R, y2: B, class: "gvz-axis" });
    make("line", { x1: L, y1: T, x2: L, y2: B, class: "gvz-axis" });
    make("text", { x: L - 4, y: T + 4, "text-anchor": "end" }, fmtNumber(hi));
    make("text", { x: L - 4, y: B, "text-anchor": "end" }, fmtNumber(lo));
    points.forEach((pts, n) => {
      const colour = PALETTE[(n + 5) % PALETTE.length];
      let d = "";
      pts.forEach((p, i) => {
        const x = X(i), y = Y(p.y);
        d += i === 0 ? "M" + x + "," + y : "H" + x + "V" + y;
      });
      if (pts.length > 1) make("path", { d, fill: "none", stroke: colour, "stroke-width": 1.5 });
      pts.forEach((p, i) => {
        const reached = p.at <= state.cursor;
        const c = make("circle", {
          cx: X(i), cy: Y(p.y), r: reached ? 4 : 3.5, stroke: colour, "stroke-width": 1.5,
          fill: reached ? colour : "#ffffff", class: reached ? "gvz-reached" : "gvz-future",
          "data-y": String(p.y),
        });
        const title = document.createElementNS(NS, "title");
        const said = { name: plotted[n].name, value: fmtNumber(p.y), when: p.label };
        title.textContent = p.norm ? tr("{name}.grad norm = {value} ({when})", said) : tr("{name}.grad = {value} ({when})", said);
        c.appendChild(title);
        if (n === 0) make("text", { x: X(i), y: B + 12, "text-anchor": "middle" }, p.short || p.label);
      });
    });
    box.appendChild(svg);
  }

  function valueRow(value, dtype) {
    return fmtValue(value, 400, isIntDtype(dtype));
  }

  function renderInspector() {
    const box = $(".gvz-insp-body");
    clear(box);
    const id = state.selected;
    if (!id) {
      box.appendChild(el("div", "gvz-muted",
        tr("Click a node to inspect it. Drag to pan, wheel to zoom; \u2190 \u2192 step the backward pass.")));
      return;
    }
    const group = groups.get(id);
    const { k, s } = place(state.cursor);
    if (group) {
      const h = el("h3", null, group.label);
      h.appendChild(el("span", "gvz-kind", group.chain ? tr("linear chain") : tr("collapsed module")));
      box.appendChild(h);
      const ops = new Map();
      for (const m of group.members) {
        const label = nodes.has(m) ? nodes.get(m).label : m;
        ops.set(label, (ops.get(label) || 0) + 1);
      }
      const top = [...ops.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([l, c]) => c + " \u00d7 " + l).join(", ");
      const rows = [[tr("nodes"), group.count], [tr("ops"), top]];
      if (k < passes.length) {
        const members = new Set(group.members);
        const inPass = passes[k].steps.filter((st) => members.has(st.node)).length;
        const done = passes[k].steps.slice(0, s).filter((st) => members.has(st.node)).length;
        rows.push([tr("pass {n}", { n: k + 1 }), tr("{done} of {total} steps run", { done, total: inPass })]);
      }
      box.appendChild(table(rows));
      const actions = el("div", "gvz-actions");
      const target = group.chain ? "all" : "open:" + group.module;
      if (viewByKey.has(target)) actions.appendChild(button(tr("Expand"), tr("Show the nodes inside (double-click)"), () => expand(id)));
      box.appendChild(actions);
      return;
    }
    const a = nodes.get(id) || {};
    const h = el("h3", null, a.label || id);
    // a kind that is a word is said in the page's language; grad_fn and accumulate_grad are names
    const kind = a.kind === "tensor" ? tr("tensor") : a.kind === "saved" ? tr("saved tensor") : a.kind || "";
    h.appendChild(el("span", "gvz-kind", kind + " \u00b7 " + id));
    box.appendChild(h);
    const rows = [
      [tr("variables"), varsOf(a).join(", ")],
      [tr("module"), moduleOf(a)],
      ["shape", a.shape !== undefined && a.shape !== null ? shapeText(a.shape) : ""],
      ["dtype", a.dtype || ""],
      ["device", a.device || ""],
    ];
    if (a.kind === "tensor") {
      rows.push(["requires_grad", a.requires_grad ? "True" : "False"]);
      rows.push(["is_leaf", a.is_leaf ? "True" : "False"]);
    }
    if (a.storage) rows.push([tr("storage"), a.storage]);
    if (typeof a.statement === "number") {
      const st = data.statements.find((x) => x.index === a.statement);
      if (st) rows.push([tr("created by"), st.line ? tr("line {line}: {source}", { line: st.line, source: st.source }) : st.source, "gvz-mono"]);
    }
    box.appendChild(table(rows));

    // saved tensors and attributes
    if (a.kind === "grad_fn") {
      box.appendChild(el("div", "gvz-sub", a.freed ? tr("Saved for backward (freed)") : tr("Saved for backward")));
      const savedRows = [];
      const saved = a.saved && typeof a.saved === "object" ? a.saved : {};
      // as Python writes them (None, True), as the rest of the page does
      const pyText = (v) => (v === null ? "None" : typeof v === "boolean" ? (v ? "True" : "False") : JSON.stringify(v));
      for (const key of Object.keys(saved)) savedRows.push([key, pyText(saved[key]), "gvz-mono"]);
      for (const e of state.view.edges) {
        if (state.view.ids[e[0]] === id && e[2] === "saved") {
          const t = nodes.get(state.view.ids[e[1]]) || {};
          savedRows.push([t.label || tr("tensor"), shapeText(t.shape) + (t.dtype ? " " + t.dtype : ""), "gvz-mono"]);
        }
      }
      if (listOf(a.stale).length) savedRows.push([tr("stale"), a.stale.join(", ")]);
      if (savedRows.length) box.appendChild(table(savedRows));
      else box.appendChild(el("div", "gvz-muted", a.freed ? tr("freed by backward") : tr("nothing")));
    }
    // the variables' values
    for (const name of varsOf(a)) {
      const t = tensors.get(name);
      if (!t || typeof t !== "object") continue;
      box.appendChild(el("div", "gvz-sub", name));
      box.appendChild(table([
        [tr("value"), valueRow(t.value, t.dtype), "gvz-mono"],
        [tr("grad (as saved)"), t.grad === null || t.grad === undefined ? "None" : valueRow(t.grad, t.dtype), "gvz-mono"],
        ["grad_fn", t.grad_fn || "None"],
        ["_version", t.version],
      ]));
    }
    // this node in the pass being replayed
    const leaf = leafOf(id);
    if (leaf) {
      const lv = leafValue(leaf, state.cursor);
      box.appendChild(table([[tr("{name}.grad now", { name: leaf.name }), lv.known ? fmtValue(lv.value) + "  (" + lv.what + ")" : "None", "gvz-mono gvz-leaf-now"]]));
    }
    if (k < passes.length) {
      const i = stepIndex[k].get(id);
      box.appendChild(el("div", "gvz-sub", tr("In {pass}", { pass: passes[k].title })));
      if (i === undefined) {
        box.appendChild(el("div", "gvz-muted", tr("The engine does not run this node in this pass.")));
      } else {
        const step = passes[k].steps[i];
        const at = { n: i + 1 };
        const status = i < s - 1 ? tr("ran at step {n}", at) : i === s - 1 ? tr("running now (step {n})", at) : tr("runs at step {n}", at);
        const rows2 = [[tr("status"), status]];
        if (i < s) {
          step.in.forEach((g, n) => rows2.push([step.in.length > 1 ? tr("grad in [{n}]", { n }) : tr("grad in"), fmtValue(g), "gvz-mono gvz-grad-in"]));
          step.targets.forEach((t, n) => {
            if (t === null || t === undefined) return;
            const target = nodes.get(t) || {};
            const label = (target.label || t) + (varsOf(target).length ? " (" + varsOf(target).join(", ") + ")" : "");
            rows2.push([tr("grad out \u2192 {target}", { target: label }), fmtValue(step.out[n]), "gvz-mono gvz-grad-out"]);
          });
          if (!step.targets.length && step.label === "AccumulateGrad") rows2.push([tr("grad out"), tr("added into .grad")]);
        }
        box.appendChild(table(rows2));
      }
    }
    const actions = el("div", "gvz-actions");
    if (state.view.key.startsWith("open:")) {
      const block = state.view.focus;
      if (inBlock(id, block)) {
        actions.appendChild(button(tr("Collapse {block}", { block }), tr("Show this block as one box again"), () => switchView("modules", id)));
      }
    }
    if (actions.firstChild) box.appendChild(actions);
  }

  function renderModules() {
    const box = $(".gvz-module-body");
    clear(box);
    const section = $(".gvz-modules");
    const blocks = views.filter((v) => v.key.startsWith("open:"));
    const hasModules = viewByKey.has("modules");
    const hasChains = viewByKey.has("chains");
    // what the page left out to stay small (gradviz.html_view.PageLimits)
    const notes = listOf(data.notes);
    if (!hasModules && !hasChains && !notes.length) {
      section.style.display = "none";
      return;
    }
    if (hasModules || hasChains) {
      const actions = el("div", "gvz-actions");
      if (hasModules) {
        actions.appendChild(button(tr("Collapse all"), tr("Each top block as one box"), () => switchView("modules")));
      }
      if (hasChains) {
        actions.appendChild(button(tr("Collapse chains"), tr("Each run of one-to-one ops as one box"), () => switchView("chains")));
      }
      actions.appendChild(button(tr("Expand all"), tr("Every node"), () => switchView("all")));
      box.appendChild(actions);
    }
    for (const note of notes) box.appendChild(el("div", "gvz-muted gvz-note", note));
    if (hasModules) {
      const list = el("div", "gvz-module-list");
      const modView = views[viewByKey.get("modules")];
      for (const id of modView.ids) {
        const g = groups.get(id);
        if (!g || g.chain) continue;
        const row = el("div", "gvz-mod");
        row.dataset.module = g.module;
        if (state.view.key === "open:" + g.module) row.classList.add("gvz-open");
        row.appendChild(el("span", "gvz-mono", g.module));
        const count = { n: g.count };
        row.appendChild(el("span", "gvz-muted", g.count === 1 ? tr("{n} node", count) : tr("{n} nodes", count)));
        row.title = viewByKey.has("open:" + g.module) ? tr("Open this block (the others stay collapsed)") : "";
        row.addEventListener("click", () => {
          if (state.view.key === "open:" + g.module) switchView("modules", id);
          else if (viewByKey.has("open:" + g.module)) switchView("open:" + g.module);
          else switchView("modules", id);
        });
        list.appendChild(row);
      }
      if (!blocks.length && !notes.length) list.appendChild(el("div", "gvz-muted", tr("Too many blocks to open one at a time: use Expand all.")));
      box.appendChild(list);
    }
  }

  function renderPanels() {
    renderStatus();
    renderInspector();
    renderGrads();
  }

  // ------------------------------------------------------------------ actions

  function select(id, center) {
    state.selected = id;
    const leaf = leafOf(id);
    if (leaf) state.picked = leaf.name;
    if (center && id) {
      const i = state.view.idx.get(id);
      if (i !== undefined && !onScreen(i)) centerOn(i, 0.6);
    }
    renderPanels();
    redraw();
  }

  // The picture position p is shown on: an earlier pass of a training loop ran over its
  // own graph, which the page draws from what the pass recorded; every other position
  // is shown on the picture picked.
  function pictureAt(p) {
    const k = passAt(p);
    const own = k < passes.length ? passes[k].view : null;
    return own && viewByKey.has(own) ? own : state.chosen;
  }

  function setCursor(p, again) {
    p = Math.max(0, Math.min(END, p));
    if (p === state.cursor && !(again && pictureAt(p) !== state.view.key)) return;
    state.cursor = p;
    const want = pictureAt(p);
    if (want && want !== state.view.key) {
      switchView(want);
      return;
    }
    state.flow = null;
    computeFlow();
    if (state.flow.executing) {
      const i = state.view.idx.get(state.flow.executing);
      if (i !== undefined && !onScreen(i)) centerOn(i);
    }
    renderPanels();
    redraw();
  }

  // Passes end at offsets[k] + steps; "one pass" moves to the next such boundary.
  function stepPass(direction) {
    const marks = passes.map((p, k) => offsets[k] + p.steps.length);
    marks.push(0, END);
    const p = state.cursor;
    const next = direction > 0
      ? Math.min(...marks.filter((m) => m > p))
      : Math.max(...marks.filter((m) => m < p));
    if (Number.isFinite(next)) setCursor(next);
  }

  function switchView(key, focusId) {
    const index = viewByKey.get(key);
    if (index === undefined) return;
    if (views[index].pass === undefined) state.chosen = key;
    const old = state.view;
    // What stays in place on screen: the node asked for, the group being opened, or the selection.
    const opening = views[index].focus;
    const anchor = focusId || (opening && old.idx.has("g:" + opening) ? "g:" + opening : state.selected);
    let anchorScreen = null;
    if (anchor && old.idx.has(anchor)) {
      const i = old.idx.get(anchor);
      anchorScreen = [old.x[i] * state.s + state.tx, old.y[i] * state.s + state.ty];
    }
    const anchorMembers = anchor && groups.has(anchor) ? groups.get(anchor).members : [];
    const selected = state.selected;
    loadView(index);
    $(".gvz-view").value = key;
    const v = state.view;
    const pick = (id) => (v.idx.has(id) ? id : v.owner.has(id) ? v.owner.get(id) : null);
    const topmost = (ids) => {
      let best = null;
      for (const id of ids) {
        const i = v.idx.get(id);
        if (i !== undefined && (best === null || v.y[i] < v.y[v.idx.get(best)])) best = id;
      }
      return best;
    };
    // the selection follows its node (or the group now hiding it); an opened group leaves none
    state.selected = selected ? pick(selected) : null;
    // an opened group is replaced by its top node, where the backward pass enters it
    let target = anchor ? pick(anchor) : null;
    if (!target) target = topmost(anchorMembers);
    if (!target && v.focus) {
      target = topmost(v.ids.filter((id) => inBlock(id, v.focus)));
    }
    state.flow = null;
    computeFlow();
    const i = target ? v.idx.get(target) : undefined;
    if (i !== undefined && anchorScreen) {
      state.tx = anchorScreen[0] - v.x[i] * state.s;
      state.ty = anchorScreen[1] - v.y[i] * state.s;
      if (!onScreen(i)) centerOn(i);
    } else if (i !== undefined) {
      centerOn(i, 0.5);
    } else {
      home();
    }
    renderModules();
    renderPanels();
    redraw();
  }

  function expand(id) {
    const g = groups.get(id);
    if (!g) return;
    if (g.chain) switchView("all", g.members[0]);
    else if (viewByKey.has("open:" + g.module)) switchView("open:" + g.module, id);
    else switchView("all", g.members[0]);
  }

  function search(text, again) {
    text = text.trim().toLowerCase();
    const hud = $(".gvz-hud");
    if (!text) return;
    if (!again || text !== state.searchText) {
      const v = state.view;
      const hits = [];
      for (let i = 0; i < v.n; i++) {
        const id = v.ids[i];
        const a = nodes.get(id) || {};
        const g = groups.get(id);
        const fields = [id, shown.get(id).lines.join(" "), varsOf(a).join(" "), moduleOf(a), g ? g.module || "" : "",
          Array.isArray(a.shape) ? a.shape.join("x") : ""];
        if (fields.some((f) => String(f).toLowerCase().includes(text))) hits.push(id);
      }
      // names hidden inside a collapsed group find the group
      if (!hits.length) {
        for (const [raw, gid] of v.owner) {
          const a = nodes.get(raw) || {};
          if ([raw, a.label || "", varsOf(a).join(" ")].some((f) => String(f).toLowerCase().includes(text))) {
            hits.push(gid);
            break;
          }
        }
      }
      state.searchHits = hits;
      state.searchAt = -1;
      state.searchText = text;
    }
    if (!state.searchHits.length) {
      hud.textContent = tr("no node matches \u201c{text}\u201d", { text });
      return;
    }
    state.searchAt = (state.searchAt + 1) % state.searchHits.length;
    const id = state.searchHits[state.searchAt];
    const i = state.view.idx.get(id);
    state.selected = id;
    centerOn(i, 0.8);
    renderPanels();
  }

  // ------------------------------------------------------------------ events

  let drag = null;
  canvas.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    canvas.setPointerCapture(ev.pointerId);
    drag = { x: ev.clientX, y: ev.clientY, tx: state.tx, ty: state.ty, moved: false };
  });
  canvas.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    drag.moved = true;
    canvas.classList.add("gvz-dragging");
    state.tx = drag.tx + dx;
    state.ty = drag.ty + dy;
    redraw();
  });
  canvas.addEventListener("pointerup", (ev) => {
    if (!drag) return;
    const moved = drag.moved;
    drag = null;
    canvas.classList.remove("gvz-dragging");
    if (moved) return;
    const r = canvas.getBoundingClientRect();
    select(hit(ev.clientX - r.left, ev.clientY - r.top));
    root.focus({ preventScroll: true });
  });
  canvas.addEventListener("dblclick", (ev) => {
    const r = canvas.getBoundingClientRect();
    const id = hit(ev.clientX - r.left, ev.clientY - r.top);
    if (id && groups.has(id)) expand(id);
    else if (!id) fit();
  });
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    const delta = ev.deltaMode === 1 ? ev.deltaY * 16 : ev.deltaY;
    zoomAt(Math.exp(-delta * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });

  const actions = {
    fit: () => fit(),
    "zoom-in": () => zoomAt(1.25, size().W / 2, size().H / 2),
    "zoom-out": () => zoomAt(0.8, size().W / 2, size().H / 2),
    start: () => setCursor(0),
    "pass-back": () => stepPass(-1),
    "step-back": () => setCursor(state.cursor - 1),
    step: () => setCursor(state.cursor + 1),
    pass: () => stepPass(1),
    end: () => setCursor(END),
  };
  root.querySelectorAll("button[data-act]").forEach((b) => b.addEventListener("click", () => actions[b.dataset.act]()));

  const viewSelect = $(".gvz-view");
  views.forEach((v) => {
    const o = el("option", null, v.title);
    o.value = v.key;
    viewSelect.appendChild(o);
  });
  if (views.length < 2) viewSelect.style.display = "none";
  // after a pick the arrow keys step the pass again rather than change the list
  viewSelect.addEventListener("change", () => {
    // a pass's own picture is shown while that pass is replayed: picking it goes there
    const v = views[viewByKey.get(viewSelect.value)];
    if (v && v.pass !== undefined && passAt(state.cursor) !== v.pass) setCursor(offsets[v.pass], true);
    else switchView(viewSelect.value);
    viewSelect.blur();
  });

  const passSelect = $(".gvz-pass");
  passes.forEach((p, k) => {
    const t = passTitle(k);
    // what matters first: the pass and whether it failed, then its statement (a long line
    // is cut at the end of the closed list)
    const head = p.error && !p.steps.length ? tr("{pass} (fails)", { pass: t.head }) : t.head;
    const o = el("option", null, t.where ? tr("{pass}: {where}", { pass: head, where: t.where }) : head);
    o.value = String(k);
    passSelect.appendChild(o);
  });
  if (passes.length) {
    const o = el("option", null, tr("after the last pass"));
    o.value = String(passes.length);
    passSelect.appendChild(o);
  } else {
    passSelect.style.display = "none";
  }
  passSelect.addEventListener("change", () => { setCursor(offsets[Number(passSelect.value)], true); passSelect.blur(); });

  const searchBox = $(".gvz-search");
  searchBox.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") { ev.preventDefault(); search(searchBox.value, true); }
    if (ev.key === "Escape") { searchBox.blur(); root.focus({ preventScroll: true }); }
  });

  document.addEventListener("keydown", (ev) => {
    const tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const key = ev.key;
    let handled = true;
    if (key === "ArrowRight") ev.shiftKey ? stepPass(1) : setCursor(state.cursor + 1);
    else if (key === "ArrowLeft") ev.shiftKey ? stepPass(-1) : setCursor(state.cursor - 1);
    else if (key === "PageDown") stepPass(1);
    else if (key === "PageUp") stepPass(-1);
    else if (key === "Home") setCursor(0);
    else if (key === "End") setCursor(END);
    else if (key === "+" || key === "=") actions["zoom-in"]();
    else if (key === "-" || key === "_") actions["zoom-out"]();
    else if (key === "0" || key === "f") fit();
    else if (key === "/") searchBox.focus();
    else if (key === "Escape") select(null);
    else handled = false;
    if (handled) ev.preventDefault();
  });

  new ResizeObserver(() => {
    stageSize = null;
    resize();
    if (!placed && size().W > 0 && size().H > 0) home();  // shown at last: place it now
    else redraw();
  }).observe(stage);

  // ------------------------------------------------------------------ legend and start

  const legend = $(".gvz-legend");
  const legendText = asMap(style.legend);
  const present = new Set();
  for (const v of views) for (const id of listOf(v.ids)) present.add(shown.get(id).style);
  for (const key of STYLE_KEYS) {
    if (!present.has(key)) continue;
    const row = el("span");
    const swatch = el("i");
    swatch.style.background = style.nodes[key][0];
    swatch.style.borderColor = style.nodes[key][1];
    row.appendChild(swatch);
    row.appendChild(document.createTextNode(legendText.get(key) || key));
    legend.appendChild(row);
  }
  if (passes.length) {
    const row = el("span");
    const swatch = el("i");
    swatch.style.background = style.backward_fill;
    swatch.style.borderColor = style.backward;
    row.appendChild(swatch);
    row.appendChild(document.createTextNode(tr("backward step")));
    legend.appendChild(row);
  }

  const K = passes.length;
  const heading = { title: data.title, n: K };
  $(".gvz-title").textContent = !K ? data.title
    : K === 1 ? tr("{title} \u00b7 {n} backward pass", heading) : tr("{title} \u00b7 {n} backward passes", heading);

  loadView(data.default_view);
  state.chosen = state.view.key;
  viewSelect.value = state.view.key;
  resize();
  computeFlow();
  renderModules();
  renderPanels();
  home();

  // What tests (and curious users, from the console) can ask the page.
  const api = {
    ready: null,
    fmtNumber, formatValue, fmtValue,
    cursor: () => ({ position: state.cursor, ...place(state.cursor), end: END }),
    view: () => state.view.key,
    selected: () => state.selected,
    executing: () => (state.flow ? state.flow.executing : null),
    ids: () => state.view.ids.slice(),
    edgeLabels: () => state.labels.slice(),
    frames: () => state.frames,
    camera: () => ({ s: state.s, tx: state.tx, ty: state.ty }),
    // where a drawn node's centre is, in CSS pixels relative to the canvas
    screenOf: (id) => {
      const i = state.view.idx.get(id);
      if (i === undefined) return null;
      return { x: state.view.x[i] * state.s + state.tx, y: state.view.y[i] * state.s + state.ty };
    },
    // the picture shown: its boxes and its edges as routed here (the tests compare them
    // with gradviz.graph.routing's)
    picture: () => {
      const v = state.view;
      return { key: v.key, ids: v.ids.slice(), x: Array.from(v.x), y: Array.from(v.y), w: Array.from(v.w),
        h: Array.from(v.h), straight: Boolean(v.straight),
        edges: v.edges.map((e) => [v.ids[e[0]], v.ids[e[1]], e[2], Array.from(e[3])]) };
    },
    pictures: () => views.map((v) => v.key),
    centerOn: (id, zoom) => {
      const i = state.view.idx.get(id);
      if (i !== undefined) { if (zoom) state.s = zoom; centerOn(i); }
    },
  };
  root.gradviz = api;
  window.gradviz = api;
  requestAnimationFrame(() => {
    draw();
    api.ready = { ms: performance.now(), scriptMs: performance.now() - t0, nodes: data.counts.nodes };
  });
})();
