// The HTTP surface against the attacks a web page can make from the
// operator's own browser (headless Chromium, the real daemon run.sh started,
// loopback only):
//   - DNS rebinding: Chromium resolves rebind.test to the daemon's address
//     (--host-resolver-rules, no DNS involved) and loads it: 421, no data;
//   - a page of another origin (a node server on 127.0.0.1) posts to the
//     operator actions: the simple request arrives and is refused, the one
//     with X-Nxdns-Request is stopped by its preflight, a form post is
//     refused; the daemon's flush counter proves nothing ran;
//   - a page of the surface's own origin may still act.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { run } from "./nxdns_cli.mjs";

const env = process.env;
const require = createRequire(path.join(env.NXDNS_NODE_MODULES, "/"));
const { chromium } = require("playwright-core");
const base = env.NXDNS_HTTP;
const daemon = new URL(base);

let browser, context, page, attacker, attackerBase;

async function metric(name) {
  const text = await (await fetch(base + "/metrics")).text();
  const m = text.match(new RegExp(`^${name} (\\d+)$`, "m"));
  assert.ok(m, `no ${name} on /metrics`);
  return Number(m[1]);
}

before(async () => {
  attacker = http.createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>another site</title><iframe name=sink></iframe>");
  });
  await new Promise((resolve) => attacker.listen(0, "127.0.0.1", resolve));
  attackerBase = `http://127.0.0.1:${attacker.address().port}`;
  browser = await chromium.launch({
    executablePath: env.NXDNS_CHROMIUM,
    headless: true,
    args: [`--host-resolver-rules=MAP rebind.test ${daemon.hostname}`],
  });
  context = await browser.newContext();
  page = await context.newPage();
  // Answers in the cache, so a flush that ran would move the counter.
  const warm = await run(["burst", "--server", env.NXDNS_DNS_V4, "--names", "3", "--zone", "warm.guard.test"]);
  assert.equal(warm.code, 0, warm.out);
  assert.ok((await metric("nxdns_cache_entries")) > 0, "nothing cached to flush");
});

after(async () => {
  await browser?.close();
  attacker?.close();
});

test("a page that rebinds its name to the daemon reads nothing", async () => {
  for (const p of ["/", "/api/health", "/summary", "/metrics"]) {
    const resp = await page.goto(`http://rebind.test:${daemon.port}${p}`);
    assert.equal(resp.status(), 421, p);
    const body = await resp.text();
    assert.ok(!/nxdns_|"upstreams"|<main/.test(body), `${p} leaked: ${body.slice(0, 200)}`);
  }
});

test("a page of another origin cannot run an operator action", async () => {
  const flushed = await metric("nxdns_cache_flushed_total");
  const entries = await metric("nxdns_cache_entries");
  await page.goto(attackerBase + "/");
  const outcome = await page.evaluate(async (target) => {
    const simple = await fetch(target + "/api/cache/flush", {
      method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body: "x",
    }).then((r) => r.type, (e) => "error: " + e.message);
    const custom = await fetch(target + "/api/cache/flush", { method: "POST", headers: { "X-Nxdns-Request": "1" } })
      .then((r) => "sent: " + r.status, () => "blocked");
    const form = document.createElement("form");
    form.method = "POST";
    form.enctype = "text/plain";
    form.action = target + "/api/cache/flush";
    form.target = "sink";
    document.body.append(form);
    const loaded = new Promise((resolve) => document.querySelector("iframe").addEventListener("load", resolve, { once: true }));
    form.submit();
    await loaded;
    return { simple, custom };
  }, base);
  // The simple request was sent (its answer is opaque to the page); the
  // custom header's preflight got no CORS grant, so that POST never left.
  assert.deepEqual(outcome, { simple: "opaque", custom: "blocked" });
  assert.equal(await metric("nxdns_cache_flushed_total"), flushed, "a cross-origin POST flushed the cache");
  assert.equal(await metric("nxdns_cache_entries"), entries);
});

test("a page of the surface's own origin still can", async () => {
  await page.goto(base + "/");
  const status = await page.evaluate(async () =>
    (await fetch("/api/cache/flush", { method: "POST", headers: { "X-Nxdns-Request": "1" } })).status);
  assert.equal(status, 200);
  assert.equal(await metric("nxdns_cache_entries"), 0);
});
