// dlock console: polls /api/locks and /api/events, draws the table, the timeline lanes and the event list.
// Plain browser JavaScript, no build step; everything shown is escaped (text nodes, never innerHTML).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const EVENT_COLORS = {
  "grant": "#2e7d32", "release": "#607d8b", "expiry": "#ef6c00", "lost": "#c62828", "force-release": "#6a1b9a"
};
let lastSeq = 0;
let events = [];
let state = null;
let windowMillis = 600000;
let pollMillis = 1000;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : child === null || child === undefined ? "" : String(child));
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function duration(ms) {
  if (ms === null || ms === undefined) return "?";
  if (ms < 1000) return ms + "ms";
  if (ms < 60000) return (ms / 1000).toFixed(1) + "s";
  const s = Math.floor(ms / 1000);
  if (s < 3600) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  return Math.floor(s / 3600) + "h" + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + "m";
}

function clock(ms) {
  return new Date(ms).toLocaleTimeString([], { hour12: false });
}

async function getJson(path) {
  const response = await fetch(path, { cache: "no-store" });
  if (!response.ok) throw new Error(path + ": HTTP " + response.status);
  return response.json();
}

async function release(name) {
  if (!window.confirm("Force-release '" + name + "'?\n\nEvery holder loses it at its next renewal; "
      + "a holder still working may then overlap with the next one (fencing tokens still increase).")) return;
  const response = await fetch("/api/release?name=" + encodeURIComponent(name),
      { method: "POST", headers: { "X-Dlock-Console": "release" } });
  const body = await response.json();
  setStatus(response.ok ? "force-released '" + name + "': " + (body.released ? "done" : "nothing held")
      : "force-release refused: " + body.error, !response.ok);
  refresh();
}

function setStatus(text, error) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.className = error ? "status error" : "status";
}

// After the store may have lost state it lists nothing and grants nothing for a while: say so and for how long.
function renderHeldBack() {
  const banner = document.getElementById("held-back");
  const left = state.heldBackMillis;
  banner.hidden = !(left > 0);
  banner.textContent = left > 0
    ? "Grants held back for " + duration(left) + ": the store may have lost holds whose leases are still "
      + "running (a restart or failover), so it grants nothing in this namespace until they have run out."
    : "";
}

function renderLocks() {
  const body = document.querySelector("#locks tbody");
  body.replaceChildren();
  for (const lock of state.locks) {
    const holders = lock.holders.length ? lock.holders : [null];
    holders.forEach((h, i) => {
      const row = el("tr", { "data-name": lock.name, "data-kind": lock.kind });
      row.append(el("td", { class: "name" }, lock.name), el("td", { class: "kind" }, lock.kind));
      if (h) {
        const left = h.leaseLeftMillis;
        row.append(
          el("td", { class: "holder", title: h.owner }, h.process),
          el("td", { class: "mode" }, h.mode),
          el("td", { class: "token num" }, h.token),
          el("td", { class: "held num", title: h.heldBeforeConsole ? "held since before the console started" : "" },
            (h.heldBeforeConsole ? "\u2265 " : "") + duration(h.heldForMillis)),
          el("td", { class: "left num" + (left !== null && left < 2000 ? " low" : ""),
            title: left === null ? "this store does not report lease time (ZooKeeper: held while the holder's session lives)" : "" },
            left === null ? "session" : duration(left)));
      } else {
        row.append(el("td", { class: "holder" }, "-"), el("td", {}, "-"), el("td", {}, "-"), el("td", {}, "-"),
          el("td", {}, "-"));
      }
      row.append(el("td", { class: "waiters num" }, lock.waiters === null ? "-" : lock.waiters));
      const action = el("td", { class: "action" });
      if (state.allowRelease && i === 0) {
        const button = el("button", { class: "release", type: "button" }, "force-release");
        button.addEventListener("click", () => release(lock.name));
        action.append(button);
      }
      row.append(action);
      body.append(row);
    });
  }
  document.getElementById("no-locks").hidden = state.locks.length > 0;
}

function renderEvents() {
  const body = document.querySelector("#events tbody");
  body.replaceChildren();
  for (const e of events.slice().reverse().slice(0, 200)) {
    const row = el("tr", { class: "event-" + e.type, "data-type": e.type, "data-name": e.name });
    row.append(el("td", {}, clock(e.at)), el("td", { class: "type" }, el("span", { class: "ev " + e.type }, e.type)),
      el("td", { class: "name" }, e.name), el("td", {}, e.kind), el("td", { title: e.owner }, e.process),
      el("td", { class: "num" }, e.token));
    body.append(row);
  }
  document.getElementById("no-events").hidden = events.length > 0;
}

function renderTimeline(now) {
  const chart = document.getElementById("timeline");
  const width = Math.max(chart.clientWidth || 900, 400);
  const label = 180, laneHeight = 22, top = 6;
  // Zoom to what happened: from the oldest event or hold (half a minute at least) up to the whole window.
  let oldest = now - 30000;
  for (const e of events) oldest = Math.min(oldest, e.at);
  for (const lock of state.locks) for (const h of lock.holders) oldest = Math.min(oldest, now - h.heldForMillis);
  const span = Math.min(Math.max(now - oldest + 3000, 30000), windowMillis);
  const start = now - span;
  document.getElementById("window").textContent =
    "(last " + duration(span) + (span < windowMillis ? "; events are kept for " + duration(windowMillis) : "") + ")";
  const x = t => label + (Math.max(t, start) - start) / span * (width - label - 10);
  const lanes = new Map();
  const lane = (name, kind) => {
    const id = kind + " " + name;
    if (!lanes.has(id)) lanes.set(id, { name, kind, holds: [], marks: [] });
    return lanes.get(id);
  };
  const open = new Map();
  for (const e of events) {
    const l = lane(e.name, e.kind);
    const key = e.kind + "\u0000" + e.name + "\u0000" + e.owner + "\u0000" + e.token;
    if (e.type === "grant") {
      open.set(key, e.at);
    } else {
      l.holds.push({ from: open.has(key) ? open.get(key) : start, to: e.at, open: false });
      open.delete(key);
    }
    l.marks.push(e);
  }
  for (const lock of state.locks) {
    const l = lane(lock.name, lock.kind);
    for (const h of lock.holders) l.holds.push({ from: now - h.heldForMillis, to: now, open: true });
  }
  chart.replaceChildren();
  const sorted = [...lanes.values()].sort((a, b) => a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind));
  const height = top + Math.max(sorted.length, 1) * laneHeight + 24;
  chart.setAttribute("height", height);
  sorted.forEach((l, i) => {
    const y = top + i * laneHeight;
    const group = svg("g", { class: "lane", "data-name": l.name, "data-kind": l.kind });
    group.append(svg("rect", { class: "lane-bg", x: label, y, width: width - label - 10, height: laneHeight - 4 }));
    group.append(svg("text", { x: 4, y: y + 13 }, l.name.length > 24 ? l.name.slice(0, 23) + "\u2026" : l.name));
    group.append(svg("text", { x: label - 30, y: y + 13, class: "axis" }, l.kind));
    for (const h of l.holds) {
      group.append(svg("rect", { class: h.open ? "hold open" : "hold", x: x(h.from), y: y + 3,
        width: Math.max(x(h.to) - x(h.from), 2), height: laneHeight - 10 }));
    }
    for (const e of l.marks) {
      const mark = svg("circle", { class: "mark", "data-type": e.type, cx: x(e.at), cy: y + (laneHeight - 4) / 2,
        r: 5, fill: EVENT_COLORS[e.type] || "#000" });
      mark.append(svg("title", {}, e.type + " " + clock(e.at) + " " + e.process + " token " + e.token));
      group.append(mark);
    }
    chart.append(group);
  });
  const axisY = height - 6;
  for (let k = 0; k <= 5; k++) {
    const t = start + k * span / 5;
    chart.append(svg("text", { class: "axis", x: Math.min(x(t), width - 60), y: axisY }, clock(t)));
  }
}

async function refresh() {
  try {
    const [locks, fresh] = await Promise.all([getJson("/api/locks"), getJson("/api/events?since=" + lastSeq)]);
    state = locks;
    windowMillis = fresh.windowMillis;
    pollMillis = locks.pollMillis;
    for (const e of fresh.events) {
      events.push(e);
      lastSeq = Math.max(lastSeq, e.seq);
    }
    events = events.filter(e => e.at >= fresh.now - windowMillis);
    document.getElementById("about").textContent = "store " + locks.store + " \u00b7 namespace " + locks.namespace
      + " \u00b7 " + (locks.allowRelease ? "force-release allowed" : "read-only");
    if (locks.error) setStatus("store error: " + locks.error, true);
    else setStatus("updated " + clock(locks.polledAt), false);
    renderHeldBack();
    renderLocks();
    renderEvents();
    renderTimeline(fresh.now);
  } catch (err) {
    setStatus("console unreachable: " + err.message, true);
  }
}

async function loop() {
  await refresh();
  setTimeout(loop, Math.max(pollMillis, 500));
}

loop();
