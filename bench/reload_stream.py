#!/usr/bin/env python3
"""A steady UDP query stream to one DNS server while its blocklist reloads
(bench/blocklist_daemon.sh): --rate queries a second for --seconds, the
names of --names taken in turn; --reload-at seconds in, the shell command
--reload is started (not waited for: the stream goes on). Every query's
send and answer times are kept, so the result is each query's own latency,
not an average.

When the reload is in use ("active") is watched on a thread of its own,
every 10 ms, one of two ways:
  --active-health URL     nxdns: /api/health's blocking.builds grew
  --active-log FILE --active-text TEXT
                          dnsmasq: one more line of FILE contains TEXT
With --pid, the same thread samples that process's VmRSS and how long its
main thread (the daemon's event loop) and this client's sending thread have
waited for a CPU (/proc/.../schedstat, run-queue time): for the slowest
queries the result says how much of their latency was the machine's other
work rather than the server's.

The stream ends after --seconds and, when a reload was asked for, once the
reload is active; answers still outstanding are then awaited 2 s more (a
server that stalled answers its queued queries late: they count with their
full latency). Bounded by --max-seconds in all. Prints one JSON object.
Loopback only: refuses any server address outside 127.0.0.0/8.
"""
import argparse
import json
import os
import select
import socket
import subprocess
import threading
import time
import urllib.request

from dns_wire import QTYPES, query, require_loopback


def pct(xs, p):
    if not xs:
        return None
    s = sorted(xs)
    return round(s[min(len(s) - 1, int(p * len(s)))], 2)


def vm_rss(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for ln in f:
                if ln.startswith("VmRSS:"):
                    return int(ln.split()[1])
    except OSError:
        pass
    return None


def run_queue_ns(pid, tid):
    # Second field of schedstat: time spent runnable but waiting for a CPU.
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None


def health_builds(url):
    with urllib.request.urlopen(url, timeout=2) as r:
        b = json.load(r).get("blocking") or {}
    return int(b.get("builds", 0)), int(b.get("build_failures", 0))


def log_count(path, text):
    try:
        with open(path, errors="replace") as f:
            return sum(1 for ln in f if text in ln)
    except OSError:
        return 0


class Watcher(threading.Thread):
    """Samples RSS and waits for the reload to be in use, off the sending
    thread, so a slow HTTP answer never delays a query."""

    def __init__(self, a, t0, client_tid):
        super().__init__(daemon=True)
        self.a, self.t0, self.client_tid = a, t0, client_tid
        self.armed = threading.Event()
        self.stop = threading.Event()
        self.active_s = None
        self.failed = None
        self.rss = []  # (s since stream start, KiB)
        self.waits = []  # (s since stream start, daemon loop run-queue ns, client run-queue ns)
        self.baseline = None
        if a.active_health:
            self.baseline = health_builds(a.active_health)
        elif a.active_log:
            self.baseline = log_count(a.active_log, a.active_text)

    def reached(self):
        if self.a.active_health:
            builds, failures = health_builds(self.a.active_health)
            if failures > self.baseline[1]:
                self.failed = "build failed (blocking.build_failures grew)"
                return True
            return builds > self.baseline[0]
        return log_count(self.a.active_log, self.a.active_text) > self.baseline

    def run(self):
        while not self.stop.is_set():
            now = time.monotonic() - self.t0
            if self.a.pid:
                r = vm_rss(self.a.pid)
                if r is not None:
                    self.rss.append((now, r))
                lw, cw = run_queue_ns(self.a.pid, self.a.pid), run_queue_ns(os.getpid(), self.client_tid)
                if lw is not None and cw is not None:
                    self.waits.append((now, lw, cw))
            if self.armed.is_set() and self.active_s is None and self.baseline is not None:
                try:
                    if self.reached():
                        self.active_s = time.monotonic() - self.t0
                except OSError:
                    pass  # a stalled server's HTTP surface: try again
            time.sleep(0.01)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="IPv4 loopback address")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--names", required=True, help="file of 'name [TYPE]' lines, asked in turn")
    ap.add_argument("--rate", type=float, default=100.0, help="queries a second (0: none, only the reload)")
    ap.add_argument("--seconds", type=float, default=12.0)
    ap.add_argument("--reload-at", type=float, default=None, help="seconds into the stream")
    ap.add_argument("--reload", help="shell command that makes the server reload")
    ap.add_argument("--active-health")
    ap.add_argument("--active-log")
    ap.add_argument("--active-text")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--goal-ms", type=float, default=50.0)
    ap.add_argument("--max-seconds", type=float, default=300.0)
    a = ap.parse_args()
    require_loopback(a.server, "reload_stream")
    names = []
    with open(a.names) as f:
        for ln in f:
            p = ln.split()
            if p:
                names.append((p[0], QTYPES.get(p[1], 1) if len(p) > 1 else 1))
    reloading = a.reload_at is not None
    if reloading and not (a.reload and (a.active_health or (a.active_log and a.active_text))):
        raise SystemExit("reload_stream: --reload-at needs --reload and --active-health or --active-log/--active-text")

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.setblocking(False)
    s.connect((a.server, a.port))

    total = int(a.rate * a.seconds)
    if total > 65536:
        raise SystemExit("reload_stream: more queries than DNS IDs")
    sent = [None] * total
    got = [None] * total
    rcode = [None] * total
    t0 = time.monotonic()
    w = Watcher(a, t0, threading.get_native_id())
    w.start()
    proc = None
    reload_s = None
    i = 0
    done_at = None  # when the last answers are no longer awaited
    while True:
        now = time.monotonic() - t0
        if reloading and reload_s is None and now >= a.reload_at:
            reload_s = now
            w.armed.set()
            proc = subprocess.Popen(a.reload, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while i < total and now >= i / a.rate:
            sent[i] = time.monotonic() - t0
            s.send(query(i, *names[i % len(names)]))
            i += 1
        stream_over = i >= total and now >= a.seconds
        if done_at is None and stream_over and (not reloading or (reload_s is not None and w.active_s is not None)):
            done_at = now + 2.0
        outstanding = sum(1 for k in range(i) if got[k] is None) if stream_over else 1
        if (done_at is not None and (now >= done_at or outstanding == 0)) or now >= a.max_seconds:
            break
        nxt = min(i / a.rate if i < total else now + 0.05, (a.reload_at if reloading and reload_s is None else 1e9))
        r, _, _ = select.select([s], [], [], max(0.0, min(0.05, nxt - now)))
        if r:
            while True:
                try:
                    m = s.recv(4096)
                except BlockingIOError:
                    break
                t = time.monotonic() - t0
                if len(m) < 4:
                    continue
                k = int.from_bytes(m[0:2], "big")
                if k < i and got[k] is None:
                    got[k] = t
                    rcode[k] = m[3] & 0x0F
    w.stop.set()
    w.join()
    reload_rc, reload_err = None, ""
    if proc is not None:
        try:
            _, err = proc.communicate(timeout=10)
            reload_err = err.decode(errors="replace").strip()
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        reload_rc = proc.returncode

    lat = [(got[k] - sent[k]) * 1000.0 for k in range(i) if got[k] is not None]
    worst = max(range(i), key=lambda k: (got[k] - sent[k]) if got[k] is not None else -1, default=None)
    rcodes = {}
    for k in range(i):
        if rcode[k] is not None:
            rcodes[str(rcode[k])] = rcodes.get(str(rcode[k]), 0) + 1
    out = {
        "sent": i,
        "answered": len(lat),
        "lost": i - len(lat),
        "rcodes": rcodes,
        "p50_ms": pct(lat, 0.50),
        "p99_ms": pct(lat, 0.99),
        "max_ms": round(max(lat), 2) if lat else None,
        "over_goal": sum(1 for x in lat if x > a.goal_ms),
        "worst_sent_s": round(sent[worst], 3) if worst is not None and got[worst] is not None else None,
        # How late this client sent against its schedule: a client held off
        # the CPU sends nothing meanwhile, and the queries it would have sent
        # never see the stall (latency is from the actual send).
        "send_late_max_ms": round(max((sent[k] - k / a.rate) * 1000.0 for k in range(i)), 1) if i else None,
    }
    if reloading:
        end = w.active_s if w.active_s is not None else time.monotonic() - t0
        out.update({
            "reload_s": round(reload_s, 3),
            "active_s": round(w.active_s, 3) if w.active_s is not None else None,
            "active_after_ms": round((w.active_s - reload_s) * 1000.0, 1) if w.active_s is not None else None,
            "reload_failed": w.failed,
            "reload_rc": reload_rc,
            "reload_stderr": reload_err[-300:],
            # The window: from the reload command to the new list in use.
            "window_sent": sum(1 for k in range(i) if reload_s <= sent[k] <= end),
            "window_answered": sum(1 for k in range(i) if got[k] is not None and reload_s <= got[k] <= end),
            # Sent during the reload and answered within --goal-ms.
            "window_on_time": sum(1 for k in range(i) if got[k] is not None and reload_s <= sent[k] <= end
                                  and (got[k] - sent[k]) * 1000.0 <= a.goal_ms),
            "window_max_ms": round(max([(got[k] - sent[k]) * 1000.0 for k in range(i) if got[k] is not None
                                        and reload_s <= sent[k] <= end] or [0.0]), 2),
        })
    if w.waits:
        # The five slowest queries, and the run-queue time of the daemon's
        # loop and of this client between the samples around each.
        def waited(t_from, t_to):
            lo = [x for x in w.waits if x[0] <= t_from]
            hi = [x for x in w.waits if x[0] >= t_to]
            if not lo or not hi:
                return None, None
            return round((hi[0][1] - lo[-1][1]) / 1e6, 1), round((hi[0][2] - lo[-1][2]) / 1e6, 1)
        slow = sorted((k for k in range(i) if got[k] is not None), key=lambda k: sent[k] - got[k])[:5]
        out["slowest"] = []
        for k in slow:
            lw, cw = waited(sent[k], got[k])
            out["slowest"].append({"sent_s": round(sent[k], 3), "ms": round((got[k] - sent[k]) * 1000.0, 1),
                                   "loop_waited_cpu_ms": lw, "client_waited_cpu_ms": cw})
    if w.rss:
        before = [r for t, r in w.rss if reload_s is None or t <= reload_s]
        out["rss_kib"] = {
            "first": w.rss[0][1],
            "before_reload": before[-1] if before else None,
            "peak_sampled": max(r for _, r in w.rss),
            "last": w.rss[-1][1],
        }
        if w.active_s is not None:
            at = [r for t, r in w.rss if t >= w.active_s]
            out["rss_kib"]["at_active"] = at[0] if at else None
            # When the old table's memory had gone back: the first sample
            # after the swap within 2 MiB of the last one.
            settled = [t for t, r in w.rss if t >= w.active_s and r <= w.rss[-1][1] + 2048]
            out["rss_kib"]["settled_after_active_ms"] = round((settled[0] - w.active_s) * 1000.0) if settled else None
    print(json.dumps(out))


if __name__ == "__main__":
    main()
