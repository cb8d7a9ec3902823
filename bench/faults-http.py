#!/usr/bin/env python3
"""Fault scenarios of bench/faults.sh that upload nothing (issue #13's acceptance harness), split out of
bench/faults.py, whose requests and helpers they use. Standard library only.

  slowloris                         N connections trickling headers; /health and first page latency
  memory   --pid P                  N requests of several kinds; VmHWM/VmRSS before and after
"""
import argparse, http.client, json, os, socket, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
faults = __import__("faults")


# -- slowloris ------------------------------------------------------------------------------------

def cmd_slowloris(a):
    stop = threading.Event()
    stats = {"opened": 0, "cut": 0, "408": 0, "open_errors": 0}
    lock = threading.Lock()

    def trickle():
        conns = []

        def open_one():
            try:
                s = socket.create_connection(("127.0.0.1", a.port), timeout=5)
                s.setblocking(False)
                s.send(b"GET /parse/classes/Photo HTTP/1.1\r\nHost: x\r\n")
                with lock:
                    stats["opened"] += 1
                return s
            except OSError:
                with lock:
                    stats["open_errors"] += 1
                return None

        for _ in range(a.connections):
            s = open_one()
            if s:
                conns.append(s)
        i = 0
        while not stop.is_set():
            # One header byte per connection every `interval` seconds, spread over the interval.
            batch = max(1, len(conns) // 20)
            for _ in range(batch):
                if not conns:
                    break
                i = (i + 1) % len(conns)
                s = conns[i]
                try:
                    try:
                        data = s.recv(4096)
                        if data is not None:
                            with lock:
                                stats["cut"] += 1
                                if b" 408 " in data[:20]:
                                    stats["408"] += 1
                            s.close()
                            conns[i] = open_one() or s
                            continue
                    except BlockingIOError:
                        pass
                    s.send(b"X")
                except OSError:
                    with lock:
                        stats["cut"] += 1
                    s.close()
                    conns[i] = open_one() or s
            time.sleep(a.interval / 20)
        for s in conns:
            s.close()

    trickler = threading.Thread(target=trickle)
    trickler.start()
    time.sleep(a.warmup)
    latencies = {"/health": [], "/parse/classes/Photo?limit=50&order=-createdAt": []}
    errors = {k: 0 for k in latencies}

    def measure(path):
        end = time.monotonic() + a.duration
        while time.monotonic() < end:
            t0 = time.monotonic()
            try:
                status, _ = faults.request(a.port, "GET", path, timeout=30)
                if status == 200:
                    latencies[path].append((time.monotonic() - t0) * 1000)
                else:
                    errors[path] += 1
            except Exception:
                errors[path] += 1
            time.sleep(0.01)

    measurers = [threading.Thread(target=measure, args=(p,)) for p in latencies]
    for t in measurers:
        t.start()
    for t in measurers:
        t.join()
    stop.set()
    trickler.join()
    print(f"slow connections: {a.connections} held ({stats['opened']} opened in all, {stats['open_errors']} refused), "
          f"{stats['cut']} cut by the server ({stats['408']} with 408)")
    for path, values in latencies.items():
        name = "/health" if path == "/health" else "first page"
        print(f"{name}: {len(values)} ok, {errors[path]} errors, p50 {faults.percentile(values, 50):.1f} ms, "
              f"p99 {faults.percentile(values, 99):.1f} ms, max {max(values) if values else float('nan'):.1f} ms")


# -- memory growth --------------------------------------------------------------------------------

def cmd_memory(a):
    paths = [
        ("GET", "/health", None),
        ("GET", "/parse/classes/Photo?limit=50&order=-createdAt", None),
        ("GET", "/parse/classes/Photo?where=%7B%22title%22%3A%7B%22%24regex%22%3A%22x%22%7D%7D&limit=5", None),
        ("GET", "/parse/classes/Photo/NoSuchId00", None),
        ("GET", "/parse/classes/Photo?where=%7Bbroken", None),
        ("GET", "/parse/classes/Nope", None),
        ("POST", "/parse/classes/Photo", b'{"original":{"__type":"File","name":"missing.jpg"}}'),
    ]

    def run(total):
        counter, lock = [0], threading.Lock()
        statuses = {}

        def worker():
            connection = None
            while True:
                with lock:
                    if counter[0] >= total:
                        break
                    n = counter[0]
                    counter[0] += 1
                method, path, body = paths[n % len(paths)]
                try:
                    if connection is None:
                        connection = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
                    h = dict(faults.HEADERS)
                    if body:
                        h["Content-Type"] = "application/json"
                    connection.request(method, path, body=body, headers=h)
                    response = connection.getresponse()
                    response.read()
                    key = response.status
                    if response.getheader("Connection", "").lower() == "close":
                        connection.close()
                        connection = None
                except Exception as e:
                    key = type(e).__name__
                    connection = None
                with lock:
                    statuses[key] = statuses.get(key, 0) + 1

        threads = [threading.Thread(target=worker) for _ in range(a.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return statuses

    run(a.warmup)
    hwm0, rss0 = faults.vm(a.pid, "VmHWM"), faults.vm(a.pid, "VmRSS")
    t0 = time.monotonic()
    statuses = run(a.requests)
    seconds = time.monotonic() - t0
    hwm1, rss1 = faults.vm(a.pid, "VmHWM"), faults.vm(a.pid, "VmRSS")
    print(f"requests: {a.requests} in {seconds:.1f} s after {a.warmup} warm-up; statuses {json.dumps({str(k): v for k, v in sorted(statuses.items(), key=str)})}")
    print(f"VmHWM: {hwm0 / 1024:.1f} MiB before, {hwm1 / 1024:.1f} MiB after ({(hwm1 - hwm0) / 1024:+.1f} MiB)")
    print(f"VmRSS: {rss0 / 1024:.1f} MiB before, {rss1 / 1024:.1f} MiB after ({(rss1 - rss0) / 1024:+.1f} MiB)")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("slowloris")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--connections", type=int, default=1000)
    s.add_argument("--interval", type=float, default=1.0)
    s.add_argument("--warmup", type=float, default=3)
    s.add_argument("--duration", type=float, default=15)
    m = sub.add_parser("memory")
    m.add_argument("--port", type=int, required=True)
    m.add_argument("--pid", type=int, required=True)
    m.add_argument("--requests", type=int, default=100_000)
    m.add_argument("--warmup", type=int, default=5_000)
    m.add_argument("--threads", type=int, default=4)
    a = p.parse_args()
    sys.exit({"slowloris": cmd_slowloris, "memory": cmd_memory}[a.command](a) or 0)


if __name__ == "__main__":
    main()
