#!/usr/bin/env python3
"""Subscriptions end with their session in every instance (issue #25, item 6), with an
independent client (PyPI `websockets`), run by Tests/GalleryAppTests/LiveQueryRevocationTests.swift
against two galleryd instances on one database.

usage: live_query_revocation_e2e.py BASE_A BASE_B APP_ID MASTER_KEY CASES_JSON
CASES_JSON: {"logout": {"token": T}, "password": {"token": T, "other": T2, "user": ID},
             "delete": {"token": T, "user": ID}, "expiry": {"token": T}, "kept": {"token": T}}
Each case's token subscribes to Photo on instance B; then, on instance A, "logout" logs out,
"password" changes the password with the user's other session ("other", which keeps its own
subscription), "delete" deletes the account with the master key; "expiry"'s session simply runs
out. Each ended subscription must get an error frame (209) with its requestId within a few
seconds; "kept" (another user's untouched session) must not. Prints one JSON summary line;
exits non-zero with the reason on failure.
"""
import asyncio
import json
import sys
import time
import urllib.request

import websockets

BASE_A, BASE_B, APP_ID, MASTER_KEY, CASES = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
WS_B = BASE_B.replace("http://", "ws://") + "/parse"


def rest(method, path, body, headers):
    request = urllib.request.Request(BASE_A + path, data=json.dumps(body).encode(), method=method)
    request.add_header("X-Parse-Application-Id", APP_ID)
    request.add_header("Content-Type", "application/json")
    for name, value in headers.items():
        request.add_header(name, value)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


async def subscriber(token, request_id):
    ws = await websockets.connect(WS_B)
    await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID, "sessionToken": token}))
    message = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert message["op"] == "connected", message
    await ws.send(json.dumps({"op": "subscribe", "requestId": request_id, "query": {"className": "Photo", "where": {}}}))
    message = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert message["op"] == "subscribed", message
    return ws


async def ended(ws, request_id, within):
    """Seconds until the error frame for `request_id`, or None when none came within `within`."""
    started = time.time()
    try:
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), max(0.01, within - (time.time() - started))))
            if message.get("op") == "error" and message.get("requestId") == request_id:
                assert message["code"] == 209, message
                return round(time.time() - started, 2)
    except (asyncio.TimeoutError, websockets.exceptions.ConnectionClosed):
        return None


async def main():
    names = ["logout", "password", "other", "delete", "expiry", "kept"]
    tokens = {"other": CASES["password"]["other"], **{name: CASES[name]["token"] for name in names if name in CASES}}
    sockets = {name: await subscriber(tokens[name], index + 1) for index, name in enumerate(names)}
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, rest, "POST", "/parse/logout", {}, {"X-Parse-Session-Token": tokens["logout"]})
    await loop.run_in_executor(None, rest, "PUT", f"/parse/users/{CASES['password']['user']}", {"password": "a new one"},
                               {"X-Parse-Session-Token": tokens["other"]})
    await loop.run_in_executor(None, rest, "DELETE", f"/parse/users/{CASES['delete']['user']}", {},
                               {"X-Parse-Master-Key": MASTER_KEY})
    waits = await asyncio.gather(*[ended(sockets[name], index + 1, 8) for index, name in enumerate(names)])
    result = dict(zip(names, waits))
    for socket in sockets.values():
        await socket.close()
    for name in ["logout", "password", "delete", "expiry"]:
        assert result[name] is not None, f"{name}: the subscription outlived its session: {result}"
    assert result["other"] is None and result["kept"] is None, f"an untouched session's subscription ended: {result}"
    print(json.dumps({"ok": True, "seconds": result}))


asyncio.run(main())
