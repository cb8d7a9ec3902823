#!/usr/bin/env python3
"""Login flood benchmark client (standard library only), driven by bench/login-flood.sh.

usage: login-flood.py PORT APP_ID USERNAME EMAIL PASSWORD DATABASE_URL
Two figures, as one JSON line:
  find_ms: a logged-in user's find (GET /parse/classes/Photo) p50/p90/max while FLOODERS clients
           send logins with over-long usernames as fast as they are answered, for SECONDS;
           with the flood's answers by status.
  guesses: ROUNDS rounds of 30 wrong passwords for one account sent at once (username and email
           mixed, up to 150 ms of jitter): how many of each round had their password checked
           (answered 101, i.e. not refused 429 by the throttle nor 503 for want of a login slot),
           with each round's answers by status (the throttle's failures are cleared between rounds
           with psql).
"""
import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time

port, app_id, username, email, password, database_url = sys.argv[1:7]
flooders = int(os.environ.get("FLOODERS", "24"))
seconds = float(os.environ.get("DURATION", "20"))
rounds = int(os.environ.get("ROUNDS", "5"))
headers = {"X-Parse-Application-Id": app_id, "Content-Type": "application/json"}


def call(method, path, body=None, extra=None, connection=None):
    own = connection is None
    connection = connection or http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
    connection.request(method, path, body=None if body is None else json.dumps(body),
                       headers={**headers, **(extra or {})})
    response = connection.getresponse()
    data = response.read()
    if own:
        connection.close()
    return response.status, data


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


status, body = call("POST", "/parse/login", {"username": username, "password": password})
assert status == 200, (status, body)
token = json.loads(body)["sessionToken"]

# Figure 1: a logged-in find while the flood runs.
stop = threading.Event()
flood_statuses = {}
lock = threading.Lock()


def flood():
    long_name = "x" * 4096
    connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
    while not stop.is_set():
        try:
            status, _ = call("POST", "/parse/login", {"username": long_name, "password": "guess"}, connection=connection)
        except (OSError, http.client.HTTPException):
            status = "error"
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
        with lock:
            flood_statuses[status] = flood_statuses.get(status, 0) + 1


threads = [threading.Thread(target=flood) for _ in range(flooders)]
for thread in threads:
    thread.start()
time.sleep(1)
latencies = []
finder = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
deadline = time.time() + seconds
while time.time() < deadline:
    started = time.time()
    status, _ = call("GET", "/parse/classes/Photo?limit=20", extra={"X-Parse-Session-Token": token}, connection=finder)
    assert status == 200, status
    latencies.append((time.time() - started) * 1000)
    time.sleep(0.05)
stop.set()
for thread in threads:
    thread.join()

# Figure 2: guesses that pass one throttle window.
passed, round_statuses = [], []
for _ in range(rounds):
    subprocess.run(["psql", database_url, "-XAtq", "-c", "delete from login_failures"], check=True)
    statuses = [None] * 30

    def guess(index):
        time.sleep(random.uniform(0, 0.15))
        name = {"username": username} if index % 2 == 0 else {"email": email}
        statuses[index] = call("POST", "/parse/login", {**name, "password": f"wrong {index}"})[0]

    guessers = [threading.Thread(target=guess, args=(i,)) for i in range(30)]
    for thread in guessers:
        thread.start()
    for thread in guessers:
        thread.join()
    passed.append(sum(1 for s in statuses if s in (200, 404)))
    round_statuses.append({str(k): statuses.count(k) for k in sorted(set(statuses))})

print(json.dumps({
    "flooders": flooders,
    "find_ms": {"n": len(latencies), "p50": round(percentile(latencies, 50), 1),
                "p90": round(percentile(latencies, 90), 1), "max": round(max(latencies), 1)},
    "flood_statuses": {str(k): v for k, v in sorted(flood_statuses.items(), key=lambda kv: str(kv[0]))},
    "guesses_checked_per_round": passed,
    "guess_statuses_per_round": round_statuses,
}))
