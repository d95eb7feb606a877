// nxdns status page: refreshes the server-rendered summary (/summary) and
// draws the last 10 minutes from /api/history as inline SVG. No library, no
// inline code (the page's Content-Security-Policy allows only this file).
"use strict";
(() => {
  const refreshMs = 2000;
  const svgNs = "http://www.w3.org/2000/svg";
  const root = document.documentElement;
  root.classList.add("js");
  let refreshes = 0;

  function el(name, attrs, text) {
    const e = document.createElementNS(svgNs, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // A round upper bound for the y axis: 1, 2, 5 x 10^n at or above `v`.
  function niceCeiling(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function format(v) {
    return v >= 100 ? String(Math.round(v)) : String(Math.round(v * 10) / 10);
  }

  function draw(figure, history) {
    const svg = figure.querySelector("svg");
    const name = figure.dataset.series;
    const scale = Number(figure.dataset.scale || "1");
    const unit = figure.dataset.unit || "";
    const values = (history[name] || []).map((v) => (v === null ? null : v * scale));
    const w = 600, h = 120, top = 16, bottom = 104;
    const cap = history.capacity || 600;
    const present = values.filter((v) => v !== null);
    const peak = present.length ? Math.max(...present) : 0;
    const yMax = niceCeiling(peak);
    const x = (i) => ((cap - values.length + i) * w) / (cap - 1);
    const y = (v) => bottom - ((bottom - top) * v) / yMax;
    let d = "";
    let pen = false;
    const dots = [];
    values.forEach((v, i) => {
      if (v === null) { pen = false; return; }
      d += (pen ? "L" : "M") + x(i).toFixed(1) + " " + y(v).toFixed(1);
      // A sample with no neighbour draws no line: mark it.
      const alone = (i === 0 || values[i - 1] === null) && (i + 1 >= values.length || values[i + 1] === null);
      if (alone) dots.push(el("circle", { class: "dot", cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 2.5 }));
      pen = true;
    });
    const last = present.length ? present[present.length - 1] : null;
    svg.replaceChildren(
      el("line", { class: "grid", x1: 0, x2: w, y1: top, y2: top }),
      el("line", { class: "grid", x1: 0, x2: w, y1: bottom, y2: bottom }),
      el("text", { x: 2, y: 12 }, format(yMax) + (unit ? " " + unit : "")),
      el("text", { x: 2, y: 118 }, "10 min ago"),
      el("text", { x: w - 2, y: 118, "text-anchor": "end" }, "now"),
      el("path", { class: "line", d: d || "M0 0" }),
      ...dots,
    );
    svg.dataset.points = String(present.length);
    svg.dataset.peak = String(peak);
    const label = figure.querySelector("figcaption").textContent;
    svg.setAttribute("aria-label", present.length
      ? `${label} over the last 10 minutes: now ${format(last)}${unit ? " " + unit : ""}, peak ${format(peak)}, ${present.length} samples`
      : `${label} over the last 10 minutes: no data yet`);
  }

  async function refresh() {
    const note = document.getElementById("refresh-note");
    try {
      const [summary, history] = await Promise.all([
        fetch("/summary", { cache: "no-store" }).then((r) => r.text()),
        fetch("/api/history", { cache: "no-store" }).then((r) => r.json()),
      ]);
      const parsed = new DOMParser().parseFromString("<main>" + summary + "</main>", "text/html");
      document.getElementById("summary").replaceChildren(...parsed.body.firstElementChild.childNodes);
      for (const f of document.querySelectorAll("#history figure")) draw(f, history);
      refreshes += 1;
      root.dataset.refreshes = String(refreshes);
      note.textContent = "Updated " + new Date().toLocaleTimeString() + "; refreshing every 2 s.";
    } catch (e) {
      note.textContent = "Cannot reach nxdns (" + e.message + "); retrying.";
    }
    setTimeout(refresh, document.hidden ? refreshMs * 5 : refreshMs);
  }

  refresh();
})();
