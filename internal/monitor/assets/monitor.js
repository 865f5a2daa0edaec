// The monitor's page: the picture comes as server-sent events from
// "events" (one per period), the charts' past from "api/history". Paths
// are relative so that the page works under any prefix. No library.
"use strict";

const WINDOW_MS = 5 * 60 * 1000;
const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#475569", "#ea580c"];
const hist = []; // {at, federates: {name: {time, updates, reflections}}}
const colorOf = new Map();
let last = null;

function color(name) {
  if (!colorOf.has(name)) colorOf.set(name, COLORS[colorOf.size % COLORS.length]);
  return colorOf.get(name);
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(k == null ? "" : String(k)));
  return e;
}

function fmt(v, digits) {
  if (v == null) return "–";
  if (typeof v === "number") return Number.isInteger(v) && digits === undefined ? String(v) : v.toFixed(digits === undefined ? 2 : digits);
  return String(v);
}

function setRows(table, rows, empty) {
  const tb = document.querySelector(table + " tbody");
  tb.replaceChildren(...rows);
  if (rows.length === 0) {
    const n = document.querySelector(table + " thead tr").children.length;
    tb.append(el("tr", {}, el("td", { class: "empty", colspan: n }, empty)));
  }
}

function render(s) {
  last = s;
  document.getElementById("federation").textContent = s.federation;
  document.title = "meshrti monitor: " + s.federation;
  document.getElementById("info").textContent =
    (s.time_implementation || "") + " · monitor " + s.monitor + (s.ended ? " · " + s.ended : "");
  const joined = s.federates.filter(f => !f.lost).length;
  document.getElementById("fed-count").textContent = joined + " joined" + (s.lost.length ? ", " + s.lost.length + " lost" : "");
  setRows("#federates", s.federates.map(f => {
    const tr = el("tr", { "data-federate": f.name, class: (f.lost ? "lost" : "") + (f.name === s.monitor ? " self" : "") },
      el("td", { class: "name" }, el("span", { class: "swatch", style: "background:" + color(f.name) }), f.name),
      el("td", { class: "num handle" }, f.handle),
      el("td", { class: "type" }, f.type),
      el("td", { class: "host" }, f.host),
      el("td", { class: "state" }, f.lost ? "lost" : (f.state || "").replace(/Federate|InProgress/g, "") + (f.time_state === "TimeAdvancing" ? ", advancing" : "")),
      el("td", { class: "num time" }, fmt(f.time)),
      el("td", { class: "num lookahead" }, fmt(f.lookahead)),
      el("td", { class: "regulating" }, f.regulating ? "yes" : "no"),
      el("td", { class: "constrained" }, f.constrained ? "yes" : "no"),
      el("td", { class: "num updates-rate" }, fmt(f.updates_per_second, 1)),
      el("td", { class: "num reflections-rate" }, fmt(f.reflections_per_second, 1)),
      el("td", { class: "num updates" }, f.updates_sent),
      el("td", { class: "num reflections" }, f.reflections),
      el("td", { class: "num objects" }, f.objects),
      el("td", { class: "num heard" }, f.lost ? "–" : fmt(f.heard, 1) + " s"));
    return tr;
  }), "no federate yet");

  setRows("#objects", s.objects.map(o => el("tr", { "data-class": o.class },
    el("td", {}, o.class), el("td", { class: "num" }, o.count),
    el("td", {}, Object.entries(o.by_federate).map(([k, v]) => k + ": " + v).join(", ")))), "no instances");

  setRows("#syncpoints", s.sync_points.map(p => el("tr", { "data-label": p.label },
    el("td", {}, p.label), el("td", {}, p.synchronized ? "synchronized" : "in progress"),
    el("td", { class: "wrap" }, Object.entries(p.federates).map(([k, v]) => k + ": " + (v === "WaitingForRestOfFederation" ? "achieved" : "moving")).join(", ")))),
    "none in progress");

  const sv = s.save, dl = document.getElementById("save");
  const t = v => v == null ? "" : " at " + fmt(v);
  dl.replaceChildren(
    el("dt", {}, "last save"), el("dd", {}, sv.last_name ? sv.last_name + t(sv.last_time) : "none"),
    el("dt", {}, "next save"), el("dd", {}, sv.next_name ? sv.next_name + t(sv.next_time) : "none scheduled"),
    el("dt", {}, "saving now"), el("dd", {}, sv.saving.length ? sv.saving.join(", ") : "nobody"),
    el("dt", {}, "restoring now"), el("dd", {}, sv.restoring.length ? sv.restoring.join(", ") : "nobody"));

  setRows("#lost", s.lost.slice().reverse().map(l => el("tr", { "data-lost": l.name },
    el("td", {}, l.name), el("td", { class: "num" }, l.handle), el("td", { class: "num" }, fmt(l.time)),
    el("td", {}, new Date(l.at).toLocaleTimeString()), el("td", { class: "wrap" }, l.reason))), "nobody lost");

  renderOwnership(s.ownership);
  drawMap(s.entities || [], s.entity_count || 0);
  renderGateways(s.gateways || []);
}

// ---- The map: entities at their place, over a plain graticule ----

const MAP_W = 900, MAP_H = 420;
const GRID_STEPS = [0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 45, 90];

function forceColor(f) {
  if (/^Friendly/.test(f)) return "#2563eb";
  if (/^Opposing/.test(f)) return "#dc2626";
  if (/^Neutral/.test(f)) return "#16a34a";
  return "#6b7280";
}

// mapBounds is the area the map shows: the entities' box with a margin,
// its edges on the graticule's lines (so that it holds still while they
// move within it), widened to the map's shape at its latitude.
function mapBounds(ents) {
  if (!ents.length) return { west: -180, east: 180, south: -90, north: 90, step: 30 };
  let s = 90, n = -90, w = 180, e = -180;
  for (const x of ents) { s = Math.min(s, x.lat); n = Math.max(n, x.lat); w = Math.min(w, x.lon); e = Math.max(e, x.lon); }
  const span = Math.max(n - s, e - w, 0.01);
  const step = GRID_STEPS.find(v => span * 1.4 / v <= 6) || 90;
  s = Math.floor((s - span * 0.2) / step) * step; n = Math.ceil((n + span * 0.2) / step) * step;
  w = Math.floor((w - span * 0.2) / step) * step; e = Math.ceil((e + span * 0.2) / step) * step;
  s = Math.max(s, -90); n = Math.min(n, 90); w = Math.max(w, -180); e = Math.min(e, 180);
  const k = Math.max(Math.cos((s + n) / 2 * Math.PI / 180), 0.05); // a degree of longitude, in degrees of latitude
  const want = MAP_W / MAP_H; // width over height, in the map's own units
  const have = (e - w) * k / (n - s);
  if (have < want) { const grow = ((n - s) * want / k - (e - w)) / 2; w -= grow; e += grow; }
  else { const grow = ((e - w) * k / want - (n - s)) / 2; s -= grow; n += grow; }
  return { west: w, east: e, south: s, north: n, step: step };
}

function drawMap(ents, count) {
  const svg = document.getElementById("map");
  const b = mapBounds(ents);
  const px = lon => (lon - b.west) / (b.east - b.west) * MAP_W;
  const py = lat => (b.north - lat) / (b.north - b.south) * MAP_H;
  for (const k of ["west", "east", "south", "north"]) svg.setAttribute("data-" + k, String(b[k]));
  const ns = "http://www.w3.org/2000/svg";
  const mk = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const kids = [];
  const deg = (v, pos, neg) => Math.abs(v).toFixed(Math.max(0, -Math.floor(Math.log10(b.step)))) + "°" + (v >= 0 ? pos : neg);
  for (let lat = Math.ceil(b.south / b.step) * b.step; lat <= b.north; lat += b.step) {
    const y = py(lat);
    kids.push(mk("line", { class: "graticule", x1: 0, x2: MAP_W, y1: y, y2: y }));
    kids.push(mk("text", { class: "graticule-label", x: 3, y: y - 2 }, deg(lat, "N", "S")));
  }
  for (let lon = Math.ceil(b.west / b.step) * b.step; lon <= b.east; lon += b.step) {
    const x = px(lon);
    kids.push(mk("line", { class: "graticule", x1: x, x2: x, y1: 0, y2: MAP_H }));
    kids.push(mk("text", { class: "graticule-label", x: x + 2, y: MAP_H - 3 }, deg(lon, "E", "W")));
  }
  for (const x of ents) {
    const g = mk("g", { class: "entity", "data-name": x.name, "data-marking": x.marking, "data-force": x.force,
      "data-lat": String(x.lat), "data-lon": String(x.lon), "data-class": x.class });
    const cx = px(x.lon), cy = py(x.lat);
    g.append(mk("circle", { cx: cx.toFixed(2), cy: cy.toFixed(2), r: 5, fill: forceColor(x.force) }));
    g.append(mk("text", { x: (cx + 7).toFixed(1), y: (cy + 4).toFixed(1) }, x.marking || x.name));
    g.append(mk("title", {}, (x.marking || x.name) + " · " + x.class + " · " + (x.force || "no force") +
      " · " + x.lat.toFixed(5) + ", " + x.lon.toFixed(5) + ", " + x.alt.toFixed(0) + " m"));
    kids.push(g);
  }
  svg.replaceChildren(...kids);
  document.getElementById("map-count").textContent = count + (count === 1 ? " entity" : " entities") +
    (count > ents.length ? " (showing " + ents.length + ")" : "");
}

function renderGateways(gws) {
  const per = m => ["entity_state", "fire", "detonation", "attribute"].map(k => (m && m[k]) || 0);
  const pdus = m => { const [es, f, d, a] = per(m); return "ES " + es + " · fire " + f + " · det. " + d + " · attr. " + a; };
  document.getElementById("gw-count").textContent = gws.length ? String(gws.length) : "";
  setRows("#gateways", gws.map(g => el("tr", { "data-gateway": g.federate },
    el("td", {}, g.federate), el("td", { class: "num exercise" }, g.exercise),
    el("td", {}, g.dis + (g.send && g.send !== g.dis ? " → " + g.send : "") + " (v" + g.version + ")"),
    el("td", { class: "pdus-in" }, pdus(g.received)), el("td", { class: "pdus-out" }, pdus(g.sent)),
    el("td", { class: "num from-dis" }, g.entities_from_dis), el("td", { class: "num to-dis" }, g.entities_to_dis),
    el("td", { class: "dropped wrap" }, Object.entries(g.dropped || {}).filter(([, n]) => n > 0).map(([k, n]) => k + ": " + n).join(", ") || "none"),
    el("td", { class: "values" }, (g.values_dropped_to_hla || 0) + " / " + (g.values_dropped_to_dis || 0)))),
    "no DIS gateway in the federation");
}

function fillSelect(sel, values, chosen, placeholder) {
  const cur = Array.from(sel.options).map(o => o.value).join("\n");
  const want = [""].concat(values).join("\n");
  if (cur !== want) {
    sel.replaceChildren(el("option", { value: "" }, placeholder), ...values.map(v => el("option", { value: v }, v)));
  }
  if (document.activeElement !== sel) sel.value = chosen || "";
}

function renderOwnership(o) {
  const classes = o.classes.slice();
  if (o.class && !classes.includes(o.class)) classes.push(o.class);
  fillSelect(document.getElementById("pick-class"), classes, o.class, "class…");
  fillSelect(document.getElementById("pick-instance"), o.instances, o.instance, "instance…");
  setRows("#ownership", o.attributes.map(a => el("tr", { "data-attribute": a.name },
    el("td", {}, a.name), el("td", {}, a.owner || "–"))),
    o.instance ? "asking the federates…" : "pick a class and an instance");
}

async function choose(cls, inst) {
  const q = new URLSearchParams({ class: cls, instance: inst });
  const r = await fetch("api/choose?" + q, { method: "POST" });
  if (r.ok) renderOwnership(await r.json());
}

document.getElementById("pick-class").addEventListener("change", e => choose(e.target.value, ""));
document.getElementById("pick-instance").addEventListener("change", e =>
  choose(document.getElementById("pick-class").value, e.target.value));

// ---- Charts: SVG polylines over the last WINDOW_MS ----

function addPoint(s) {
  if (!s.at) return;
  if (hist.length && hist[hist.length - 1].at >= s.at) return;
  const p = { at: s.at, federates: {} };
  for (const f of s.federates) {
    if (f.lost) continue;
    p.federates[f.name] = { time: f.time, updates: f.updates_per_second, reflections: f.reflections_per_second };
  }
  hist.push(p);
  while (hist.length && hist[0].at < s.at - WINDOW_MS) hist.shift();
}

function drawChart(id, legendId, pick, unit) {
  const svg = document.getElementById(id);
  const W = 600, H = 220, L = 46, R = 8, T = 8, B = 20;
  const now = hist.length ? hist[hist.length - 1].at : Date.now();
  const x0 = now - WINDOW_MS;
  const series = new Map();
  let lo = Infinity, hi = -Infinity;
  for (const p of hist) {
    for (const [name, v] of Object.entries(p.federates)) {
      const y = pick(v);
      if (y == null || !isFinite(y)) continue;
      if (!series.has(name)) series.set(name, []);
      series.get(name).push([p.at, y]);
      lo = Math.min(lo, y); hi = Math.max(hi, y);
    }
  }
  if (!isFinite(lo)) { lo = 0; hi = 1; }
  if (unit === "rate") lo = 0;
  if (hi - lo < 1e-9) { hi = lo + 1; }
  const pad = (hi - lo) * 0.05; hi += pad; if (unit !== "rate") lo -= pad;
  const sx = t => L + (t - x0) / WINDOW_MS * (W - L - R);
  const sy = v => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
  const ns = "http://www.w3.org/2000/svg";
  const kids = [];
  const mk = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    kids.push(e);
  };
  for (let i = 0; i <= 4; i++) {
    const v = lo + (hi - lo) * i / 4, y = sy(v);
    mk("line", { x1: L, x2: W - R, y1: y, y2: y, class: "grid" });
    mk("text", { x: L - 4, y: y + 3, "text-anchor": "end" }, Math.abs(hi - lo) >= 10 ? v.toFixed(0) : v.toFixed(1));
  }
  for (let m = 0; m <= 5; m++) {
    const x = sx(now - m * 60000);
    mk("line", { x1: x, x2: x, y1: T, y2: H - B, class: "grid" });
    mk("text", { x: x, y: H - 6, "text-anchor": "middle" }, m === 0 ? "now" : "-" + m + " min");
  }
  const legend = [];
  for (const [name, pts] of series) {
    const c = color(name);
    mk("polyline", { "data-federate": name, stroke: c, points: pts.map(([t, v]) => sx(t).toFixed(1) + "," + sy(v).toFixed(1)).join(" ") });
    legend.push(el("span", {}, el("span", { class: "swatch", style: "background:" + c }), name));
  }
  svg.replaceChildren(...kids);
  document.getElementById(legendId).replaceChildren(...legend);
}

function redraw() {
  drawChart("chart-time", "legend-time", v => v.time, "time");
  drawChart("chart-rate", "legend-rate", v => v.updates, "rate");
}

// ---- Live updates ----

function connect() {
  const st = document.getElementById("status");
  const es = new EventSource("events");
  es.addEventListener("snapshot", e => {
    const s = JSON.parse(e.data);
    st.textContent = "live"; st.className = "status live";
    addPoint(s);
    render(s);
    redraw();
  });
  es.onerror = () => { st.textContent = "reconnecting"; st.className = "status down"; };
}

async function start() {
  try {
    const h = await (await fetch("api/history")).json();
    for (const p of h.points) hist.push(p);
  } catch (e) { /* the stream fills the charts */ }
  connect();
}
start();
