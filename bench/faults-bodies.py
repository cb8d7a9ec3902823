#!/usr/bin/env python3
"""bench/faults.sh `bodies`: the server's memory with large photos (issue #28: a 48 MP grid HEIC, a
27 MiB PNG), in two phases, its VmRSS sampled every 50 ms:
  1. --uploads concurrent uploads of --photo (each made unique, bench/faults.py unique_photo), --slow
     of them trickled at --rate bytes/s (slowloris with bodies: the server spools each to disk, so
     they should cost buffers, not their size); no photo is created yet
  2. the photos of the acknowledged uploads created at once: the server's workers decode them
     (`--workers` of `serve`), until none is pending or processing (--settle seconds at most)
Prints each phase's seconds, statuses, peak VmRSS and the VmHWM before and after.
Usage: faults-bodies.py --port P --pid PID --photo F [--uploads 8] [--slow 4] [--rate 1048576]
The photos' state is read with psql (PSQL, DATABASE_URL)."""
import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
faults = __import__("faults")


class Sampler:
    """VmRSS of `pid` every 50 ms, its peak kept, until stopped."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, 0, threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, faults.vm(self.pid, "VmRSS"))
            time.sleep(0.05)

    def end(self):
        self.stop.set()
        self.thread.join()
        return self.peak


def slow_upload(port, path, data, mime, rate):
    """POST with Content-Length, the body sent at `rate` bytes/s: (status, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=120)
    try:
        head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {mime}\r\nContent-Length: {len(data)}\r\n"
                + "".join(f"{k}: {v}\r\n" for k, v in faults.HEADERS.items()) + "Connection: close\r\n\r\n")
        s.sendall(head.encode())
        step = 64 * 1024
        for at in range(0, len(data), step):
            t0 = time.monotonic()
            s.sendall(data[at:at + step])
            time.sleep(max(0.0, step / rate - (time.monotonic() - t0)))
        answer = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
        status = int(answer.split(b" ", 2)[1])
        return status, answer.split(b"\r\n\r\n", 1)[1]
    finally:
        s.close()


def waiting(ids):
    if not ids:
        return 0
    query = "select count(*) from photos where status in ('pending', 'processing') and object_id in (%s)" % ",".join(
        "'%s'" % i for i in ids)
    return int(subprocess.run([os.environ.get("PSQL", "psql"), os.environ["DATABASE_URL"], "-tAc", query],
                              check=True, capture_output=True, text=True).stdout.strip() or 0)


def statuses(ids):
    if not ids:
        return "none"
    query = ("select coalesce(string_agg(status || ' ' || n, ', '), 'none') from (select status, count(*) n "
             "from photos where object_id in (%s) group by 1 order by 1) s") % ",".join("'%s'" % i for i in ids)
    return subprocess.run([os.environ.get("PSQL", "psql"), os.environ["DATABASE_URL"], "-tAc", query],
                          check=True, capture_output=True, text=True).stdout.strip()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--photo", required=True)
    p.add_argument("--uploads", type=int, default=8)
    p.add_argument("--slow", type=int, default=4)
    p.add_argument("--rate", type=float, default=1 << 20)
    p.add_argument("--settle", type=float, default=900)
    a = p.parse_args()
    base = open(a.photo, "rb").read()
    ext, mime = faults.extension(base), faults.content_type(base)
    mib = 1024.0
    print(f"photo {os.path.basename(a.photo)}: {len(base) / 1048576:.1f} MiB; {a.uploads} uploads, {a.slow} of them "
          f"trickled at {a.rate / 1048576:.2f} MiB/s")
    hwm0, rss0 = faults.vm(a.pid, "VmHWM"), faults.vm(a.pid, "VmRSS")
    print(f"before: VmRSS {rss0 / mib:.1f} MiB, VmHWM {hwm0 / mib:.1f} MiB")

    results, lock = {}, threading.Lock()

    def upload(i):
        data = faults.unique_photo(base, f"bodies {i} {time.time_ns()}")
        try:
            if i < a.slow:
                status, body = slow_upload(a.port, f"/parse/files/b{i}.{ext}", data, mime, a.rate)
            else:
                status, body = faults.request(a.port, "POST", f"/parse/files/b{i}.{ext}", data,
                                              {"Content-Type": mime}, timeout=300)
            name = json.loads(body)["name"] if status == 201 else None
        except Exception as e:
            status, name = type(e).__name__, None
        with lock:
            results[i] = (status, name)

    sampler = Sampler(a.pid)
    t0 = time.monotonic()
    threads = [threading.Thread(target=upload, args=(i,)) for i in range(a.uploads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - t0
    peak = sampler.end()
    counts = {}
    for status, _ in results.values():
        counts[str(status)] = counts.get(str(status), 0) + 1
    print(f"1. uploads: {seconds:.1f} s, statuses {json.dumps(counts)}; peak VmRSS {peak / mib:.1f} MiB "
          f"({(peak - rss0) / mib:+.1f}), VmHWM {faults.vm(a.pid, 'VmHWM') / mib:.1f} MiB")

    rss1 = faults.vm(a.pid, "VmRSS")
    sampler = Sampler(a.pid)
    t0 = time.monotonic()
    ids = []
    for status, name in results.values():
        if name:
            code, object_id = faults.create_photo(a.port, name)
            if object_id:
                ids.append(object_id)
    while waiting(ids) and time.monotonic() - t0 < a.settle:
        time.sleep(0.5)
    seconds = time.monotonic() - t0
    peak = sampler.end()
    print(f"2. jobs: {len(ids)} photos created, {statuses(ids)} after {seconds:.1f} s; peak VmRSS {peak / mib:.1f} MiB "
          f"({(peak - rss1) / mib:+.1f} over the {rss1 / mib:.1f} MiB after the uploads), "
          f"VmHWM {faults.vm(a.pid, 'VmHWM') / mib:.1f} MiB, VmRSS after {faults.vm(a.pid, 'VmRSS') / mib:.1f} MiB")


if __name__ == "__main__":
    main()
