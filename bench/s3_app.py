#!/usr/bin/env python3
"""Drives one running galleryd for bench/s3.sh: uploads PHOTOS and times upload→ready for each,
then GETs one thumbnail from the bucket endpoint over one keep-alive connection for SECONDS and
prints requests/s (a 307 counts as an answer: the redirect mode's work ends there). With LARGE
set to a file, also uploads it and GETs its original three times on fresh connections, printing the
median time to the first body byte and to the last (the proxy streams: the first should not wait
for the last).
Usage: [LARGE=file] s3_app.py BASE_URL SECONDS PHOTO..."""
import http.client, json, os, sys, time, urllib.parse

base, seconds, photos = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
url = urllib.parse.urlsplit(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
# The master key bench/s3.sh starts galleryd with: the app id alone reads nothing.
headers = {"X-Parse-Application-Id": "gallery", "X-Parse-Master-Key": "bench-master-key-0123456789"}

def call(method, path, body=None, extra=None):
    conn.request(method, path, body=body, headers={**headers, **(extra or {})})
    response = conn.getresponse()
    data = response.read()
    return response.status, data, response

durations, ids = [], []
for photo in photos:
    data = open(photo, "rb").read()
    started = time.monotonic()
    status, body, _ = call("POST", "/parse/files/bench.jpg", data, {"Content-Type": "image/jpeg"})
    assert status == 201, (status, body)
    name = json.loads(body)["name"]
    status, body, _ = call("POST", "/parse/classes/Photo", json.dumps({"original": {"__type": "File", "name": name}}),
                           {"Content-Type": "application/json"})
    assert status in (200, 201), (status, body)
    photo_id = json.loads(body)["objectId"]
    while True:
        status, body, _ = call("GET", f"/parse/classes/Photo/{photo_id}")
        state = json.loads(body).get("status")
        if state in ("ready", "failed"):
            break
        time.sleep(0.02)
    durations.append(time.monotonic() - started)
    ids.append(photo_id)
    assert state == "ready", body

durations.sort()
print(f"upload→ready: {len(durations)} photos, median {durations[len(durations) // 2] * 1000:.0f} ms, "
      f"max {durations[-1] * 1000:.0f} ms")

count, size, statuses = 0, 0, set()
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    status, body, _ = call("GET", f"/bucket/thumbnails/{ids[0]}.jpg")
    statuses.add(status)
    count += 1
    size = len(body)
print(f"bucket GET (one connection, sequential): {count / seconds:.0f} req/s, status {sorted(statuses)}, {size} bytes each")

large = os.environ.get("LARGE")
if large:
    data = open(large, "rb").read()
    status, body, _ = call("POST", "/parse/files/large.jpg", data, {"Content-Type": "image/jpeg"})
    assert status == 201, (status, body)
    path = "/bucket/originals/" + json.loads(body)["name"]
    firsts, totals, statuses = [], [], set()
    for _ in range(3):
        fresh = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        started = time.monotonic()
        fresh.request("GET", path)
        response = fresh.getresponse()
        statuses.add(response.status)
        first = response.read(1)
        firsts.append(time.monotonic() - started)
        rest = response.read()
        totals.append(time.monotonic() - started)
        assert response.status != 200 or len(first) + len(rest) == len(data), (len(first) + len(rest), len(data))
        fresh.close()
    firsts.sort()
    totals.sort()
    print(f"large original ({len(data)} bytes, fresh connection, median of 3): first byte {firsts[1] * 1000:.0f} ms, "
          f"last byte {totals[1] * 1000:.0f} ms, status {sorted(statuses)}")
