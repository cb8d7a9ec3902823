#!/usr/bin/env python3
"""LiveQuery fan-out benchmark client (PyPI `websockets`), driven by bench/live.sh.

usage: live.py WS_URL APP_ID SUBSCRIBERS EVENTS SERVER_PID READY_FILE
Opens SUBSCRIBERS connections, each subscribed to every Photo, writes READY_FILE (the shell
then commits EVENTS updates whose title is the commit-time clock), and reports events/s
delivered to all subscribers, commit-to-delivery latency p50/p99 and the server's RSS per idle
subscriber, as one JSON line.
"""
import asyncio
import json
import os
import sys
import time

import websockets

url, app_id, n, events, pid, ready_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]


def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


latencies, first, last = [], [None], [None]


async def subscriber(ws):
    got = 0
    while got < events:
        message = json.loads(await ws.recv())
        if message.get("op") != "update":
            continue
        now = time.time()
        first[0] = first[0] or now
        last[0] = now
        latencies.append(now - float(message["object"]["title"]))
        got += 1


async def main():
    before = rss_kib()
    sockets = []
    for i in range(n):
        ws = await websockets.connect(url, max_queue=None, ping_interval=None)
        # The master key (live.sh exports it): the app id alone receives no event.
        await ws.send(json.dumps({"op": "connect", "applicationId": app_id, "masterKey": os.environ["GALLERYD_MASTER_KEY"]}))
        await ws.recv()
        await ws.send(json.dumps({"op": "subscribe", "requestId": 1, "query": {"className": "Photo", "where": {}}}))
        await ws.recv()
        sockets.append(ws)
    await asyncio.sleep(1)
    after = rss_kib()
    open(ready_file, "w").write("ready")
    try:
        await asyncio.wait_for(asyncio.gather(*(subscriber(ws) for ws in sockets)), 300)
    except asyncio.TimeoutError:
        pass
    latencies.sort()
    delivered = len(latencies)
    span = (last[0] - first[0]) if delivered > 1 else 0
    print(json.dumps({
        "subscribers": n, "events": events, "delivered": delivered,
        "deliveries_per_s": round(delivered / span) if span else None,
        "latency_ms_p50": round(latencies[delivered // 2] * 1000, 1) if delivered else None,
        "latency_ms_p99": round(latencies[min(delivered - 1, int(delivered * 0.99))] * 1000, 1) if delivered else None,
        "rss_kib_before": before, "rss_kib_after": after,
        "rss_kib_per_subscriber": round((after - before) / n, 1),
    }))
    for ws in sockets:
        await ws.close()


asyncio.run(main())
