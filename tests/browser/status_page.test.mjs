// The status page in headless Chromium against the real daemon and
// DoT fixture that run.sh started (loopback only). The tests run in order and
// share one browser: load (no console errors, no CSP violations), the figures
// equal /api/health's, a burst moves them and the chart, layouts at 360 and
// 1280 px (screenshots), and finally the upstream dies and the page shows
// the episode.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { run } from "./nxdns_cli.mjs";

const env = process.env;
const require = createRequire(path.join(env.NXDNS_NODE_MODULES, "/"));
const { chromium } = require("playwright-core");
const base = env.NXDNS_HTTP;
const origin = new URL(base).origin;

let browser, context, page;
const consoleErrors = [];
const foreignRequests = [];

async function api(p) {
  const r = await fetch(base + p);
  return r.json();
}

// The value at a dotted path of a JSON document ("upstreams.0.latency.p50_seconds").
function at(doc, dotted) {
  return dotted.split(".").reduce((v, k) => (v === undefined || v === null ? undefined : v[k]), doc);
}

// Every figure on the page: data-field -> {value (data-value), text}.
async function figures(p = page) {
  return p.$$eval("#summary [data-field]", (els) =>
    Object.fromEntries(els.map((e) => [e.dataset.field, { value: e.dataset.value ?? null, text: e.textContent.trim() }])));
}

async function refreshes(p = page) {
  return Number(await p.evaluate(() => document.documentElement.dataset.refreshes || "0"));
}

// Until the script has refreshed the summary `n` more times (so what the
// page shows was fetched after whatever the caller just did).
async function nextRefreshes(n = 1, p = page) {
  const target = (await refreshes(p)) + n;
  await p.waitForFunction((t) => Number(document.documentElement.dataset.refreshes || "0") >= t, target, { timeout: 15000 });
}

async function chartPoints(series) {
  return page.$eval(`#history figure[data-series="${series}"] svg`, (s) => ({
    points: Number(s.dataset.points || "0"),
    peak: Number(s.dataset.peak || "0"),
    label: s.getAttribute("aria-label"),
  }));
}

before(async () => {
  browser = await chromium.launch({ executablePath: env.NXDNS_CHROMIUM, headless: true });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Recorded from the first byte of every document, so a violation during
  // parsing is not missed.
  await context.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => consoleErrors.push("pageerror: " + e.message));
  page.on("request", (r) => { if (!r.url().startsWith(origin + "/")) foreignRequests.push(r.url()); });
  // Something to show: a few answered queries (latency, TLS, replies, cache).
  const warm = await run(["burst", "--server", env.NXDNS_DNS_V4, "--names", "3", "--zone", "warm.page.test"]);
  assert.equal(warm.code, 0, warm.out);
});

after(async () => {
  await browser?.close();
});

test("the page loads with no console errors and no CSP violations", async () => {
  const resp = await page.goto(base + "/", { waitUntil: "load" });
  assert.equal(resp.status(), 200);
  const csp = resp.headers()["content-security-policy"];
  assert.ok(csp && csp.includes("script-src 'self'") && !csp.includes("unsafe-inline"), `CSP: ${csp}`);
  await nextRefreshes(1);
  assert.deepEqual(consoleErrors, []);
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(foreignRequests, [], "the page loaded something from elsewhere");
  // Bytes a page load costs, for the report: every response body.
  const sizes = await page.evaluate(() => performance.getEntriesByType("resource").map((e) => [e.name, e.encodedBodySize]));
  const html = (await (await fetch(base + "/")).text()).length;
  console.log(`page weight: / ${html} B + ${sizes.map(([n, s]) => `${new URL(n).pathname} ${s} B`).join(" + ")}`);
});

test("without JavaScript the summary is complete", async () => {
  const ctx = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
  const p = await ctx.newPage();
  await p.goto(base + "/");
  const f = await figures(p);
  const health = await api("/api/health");
  assert.equal(f["status"].text, health.status);
  assert.equal(Number(f["upstreams.0.slots"].text), health.upstreams[0].slots);
  assert.equal(f["upstreams.0.url"].text, health.upstreams[0].url);
  assert.match(await p.textContent("body"), /The charts need JavaScript/);
  await ctx.close();
});

test("the page shows the values /api/health reports", async () => {
  await page.reload({ waitUntil: "load" });
  const health = await api("/api/health");
  const f = await figures();
  // The figures the page exists to show; it must have every one.
  const required = ["status", "open_episodes", "listeners.queries_in_flight", "listeners.udp_in_flight.ipv4",
    "listeners.tcp_connections.ipv4", "cache.hit_ratio", "cache.entries", "cache.bytes", "cache.stale_answers"];
  for (const u of health.upstreams) {
    for (const k of ["kind", "url", "priority", "state", "open_sessions", "slots", "in_flight", "queue_depth", "queued_total",
      "tls_version", "tls_handshakes.resumed", "tls_handshakes.full", "reuse_recoveries", "latency.p50_seconds",
      "latency.p95_seconds"]) required.push(`upstreams.${u.upstream}.${k}`);
  }
  for (const [proto, byCode] of Object.entries(health.listeners.replies)) {
    for (const code of Object.keys(byCode)) required.push(`listeners.replies.${proto}.${code}`);
  }
  for (const [reason, n] of Object.entries(health.listeners.rejections)) if (n) required.push(`listeners.rejections.${reason}`);
  for (const k of required) assert.ok(f[k], `the page has no figure ${k}`);
  assert.ok(Object.keys(health.listeners.replies.udp).length > 0, "the warm-up queries left no reply counts");

  let compared = 0;
  for (const [field, { value, text }] of Object.entries(f)) {
    if (field.startsWith("episodes.")) continue;
    // The API lists only the response codes a protocol has sent; the page's
    // table shows a code seen on either protocol, with 0 for the other.
    const want = at(health, field) ?? (field.startsWith("listeners.replies.") ? 0 : undefined);
    if (field === "uptime_seconds") {
      assert.ok(Math.abs(Number(value) - want) < 5, `uptime ${value} vs ${want}`);
    } else if (typeof want === "number") {
      // Seconds are rounded to milliseconds in the JSON; integers are exact,
      // on the screen as well as in data-value.
      const v = Number(value);
      const counter = !field.endsWith("_seconds") && field !== "cache.hit_ratio";
      const tolerance = counter ? 0 : 0.0005;
      assert.ok(Math.abs(v - want) <= tolerance, `${field}: page ${value}, /api/health ${want}`);
      if (counter && !field.startsWith("cache.") ) assert.equal(text, String(want), `${field} as shown`);
      if (field === "cache.bytes" || field === "cache.max_bytes") {
        const shown = parseFloat(text) * (text.endsWith("MiB") ? 1048576 : text.endsWith("KiB") ? 1024 : 1);
        assert.ok(Math.abs(shown - want) <= want * 0.05 + 1, `${field} shown as ${text}, API ${want}`);
      } else if (field.startsWith("cache.") && counter) {
        assert.equal(text, String(want), `${field} as shown`);
      }
      if (field.endsWith("latency.p50_seconds") || field.endsWith("latency.p95_seconds")) {
        assert.ok(Math.abs(parseFloat(text) - want * 1000) <= 0.6, `${field} shown as ${text}, API ${want}`);
      }
      if (field === "cache.hit_ratio") assert.ok(Math.abs(parseFloat(text) - want * 100) <= 0.1, `hit ratio shown ${text}`);
    } else if (typeof want === "string") {
      assert.equal(text, want, field);
    } else if (want === null) {
      assert.equal(text, "–", `${field} is null in the API`);
    } else {
      assert.fail(`${field}: no such figure in /api/health (${JSON.stringify(want)})`);
    }
    compared++;
  }
  assert.ok(compared >= required.length, `compared ${compared} figures`);
  console.log(`compared ${compared} figures with /api/health`);
});

test("a burst moves in-flight, the queue and the chart", async () => {
  await nextRefreshes(1);
  const before = await figures();
  const qpsBefore = await chartPoints("queries_per_second");
  // 60 names over IPv4 and 60 over IPv6 (each family has its own UDP cap of
  // 64): 120 exchanges at an upstream that admits 64, so 56 wait in its
  // FIFO; every answer takes 1.5 s.
  const bursts = Promise.all([
    run(["burst", "--server", env.NXDNS_DNS_V4, "--names", "60", "--zone", "b4.page.test", "--timeout-ms", "8000"]),
    run(["burst", "--server", env.NXDNS_DNS_V6, "--names", "60", "--zone", "b6.page.test", "--timeout-ms", "8000"]),
  ]);
  let done = false;
  bursts.then(() => (done = true));
  let maxInFlight = 0, maxQueryInFlight = 0;
  while (!done) {
    const f = await figures();
    maxInFlight = Math.max(maxInFlight, Number(f["upstreams.0.in_flight"].value));
    maxQueryInFlight = Math.max(maxQueryInFlight, Number(f["listeners.queries_in_flight"].value));
    await page.waitForTimeout(100);
  }
  const results = await bursts;
  await nextRefreshes(2);
  const after = await figures();
  const qps = await chartPoints("queries_per_second");
  const queue = await chartPoints("queue_depth");
  const health = await api("/api/health");
  console.log(`burst: in flight seen ${maxInFlight}, queries in flight seen ${maxQueryInFlight}, ` +
    `queued_total ${before["upstreams.0.queued_total"].value} -> ${after["upstreams.0.queued_total"].value}, ` +
    `chart points ${qpsBefore.points} -> ${qps.points}, queue peak ${queue.peak}, qps peak ${qps.peak}; ` +
    `burst exits ${results.map((r) => r.code).join(",")}`);
  assert.ok(maxInFlight > 0, "the page never showed an exchange in flight during the burst");
  assert.ok(Number(after["upstreams.0.queued_total"].value) >= Number(before["upstreams.0.queued_total"].value) + 1,
    "queued_total did not move");
  assert.equal(Number(after["upstreams.0.queued_total"].value), health.upstreams[0].queued_total);
  const noerror = (f) => Number(f["listeners.replies.udp.NOERROR"]?.value ?? 0);
  assert.ok(noerror(after) >= noerror(before) + 100, `NOERROR replies ${noerror(before)} -> ${noerror(after)}`);
  assert.ok(qps.points > qpsBefore.points, "the chart gained no points");
  assert.ok(qps.peak > 0 && queue.peak > 0, `chart peaks: qps ${qps.peak}, queue ${queue.peak}`);
  assert.match(qps.label, /samples/);
  // The chart draws what /api/history holds.
  const history = await api("/api/history");
  assert.ok(Math.abs(history.samples - qps.points) <= 2, `history ${history.samples} samples, chart ${qps.points}`);
  assert.ok(Math.max(...history.queue_depth) > 0);
});

async function assertNoOverflow(width) {
  await page.setViewportSize({ width, height: 900 });
  await page.reload({ waitUntil: "load" });
  await nextRefreshes(1);
  const { scroll, client } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert.ok(scroll <= client, `${width} px: content is ${scroll} px wide`);
}

test("renders at 360 px and 1280 px, light and dark, with accessible names", async () => {
  for (const [width, scheme] of [[1280, "light"], [360, "light"], [360, "dark"], [1280, "dark"]]) {
    await page.emulateMedia({ colorScheme: scheme });
    await assertNoOverflow(width);
    await page.screenshot({ path: path.join(env.NXDNS_SCREENSHOTS, `status-${width}-${scheme}.png`), fullPage: true });
  }
  // Between the two, every width a phone, tablet or window may have: the
  // layout switches from cards to the table at 1100 px, without overflow.
  for (const width of [320, 412, 600, 768, 1024, 1099, 1101, 1180, 1600]) {
    await page.setViewportSize({ width, height: 900 });
    const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(scroll <= width, `${width} px: content is ${scroll} px wide`);
  }
  await page.emulateMedia({ colorScheme: "light" });
  const light = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.emulateMedia({ colorScheme: "dark" });
  const dark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(light, dark, "prefers-color-scheme changes nothing");
  await page.emulateMedia({ colorScheme: "light" });
  const a11y = await page.evaluate(() => ({
    figures: [...document.querySelectorAll("figure")].map((f) => ({
      caption: f.querySelector("figcaption")?.textContent.trim() || "",
      label: f.querySelector("svg")?.getAttribute("aria-label") || "",
      role: f.querySelector("svg")?.getAttribute("role") })),
    tables: [...document.querySelectorAll("table")].map((t) => ({
      caption: t.querySelector("caption")?.textContent.trim() || "", headers: t.querySelectorAll("th").length })),
  }));
  assert.ok(a11y.figures.length >= 3);
  for (const f of a11y.figures) assert.ok(f.caption && f.label && f.role === "img", JSON.stringify(f));
  for (const t of a11y.tables) assert.ok(t.caption && t.headers > 0, JSON.stringify(t));
  assert.deepEqual(consoleErrors, []);
});

test("the page shows an episode after the upstream dies", async () => {
  process.kill(Number(env.NXDNS_FIXTURE_PID), "SIGKILL");
  await run(["burst", "--server", env.NXDNS_DNS_V4, "--names", "4", "--zone", "dead.page.test", "--timeout-ms", "3000"]);
  await page.waitForFunction(() => document.querySelector('[data-field="episodes.0.open"]')?.textContent === "open",
    null, { timeout: 15000 });
  const f = await figures();
  const diag = await api("/api/diagnostics");
  const health = await api("/api/health");
  const ep = diag.episodes[0];
  assert.equal(ep.open, true);
  assert.equal(f["episodes.0.first_cause"].text, ep.first_cause);
  assert.equal(f["episodes.0.started_at"].text, ep.started_at);
  assert.equal(Number(f["episodes.0.upstream"].value), ep.upstream);
  assert.ok(Number(f["episodes.0.failures"].value) >= 1);
  assert.notEqual(health.status, "ok");
  assert.notEqual(f["status"].text, "ok");
  await page.screenshot({ path: path.join(env.NXDNS_SCREENSHOTS, "status-1280-upstream-dead.png"), fullPage: true });
  // A failed fetch would be a console error; the daemon itself never went away.
  assert.deepEqual(consoleErrors, []);
});
