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

import websockets

from live_query_client import Server, subscribed

BASE_A, BASE_B, APP_ID, MASTER_KEY, CASES = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
INSTANCE_A, INSTANCE_B = Server(BASE_A, APP_ID), Server(BASE_B, APP_ID)


async def subscriber(token, request_id):
    ws = await INSTANCE_B.socket(sessionToken=token)
    await subscribed(ws, request_id, "Photo", {})
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
    await INSTANCE_A.call("POST", "/parse/logout", {}, headers={"X-Parse-Session-Token": tokens["logout"]})
    await INSTANCE_A.call("PUT", f"/parse/users/{CASES['password']['user']}", {"password": "a new one"},
                          headers={"X-Parse-Session-Token": tokens["other"]})
    await INSTANCE_A.call("DELETE", f"/parse/users/{CASES['delete']['user']}", {}, headers={"X-Parse-Master-Key": MASTER_KEY})
    waits = await asyncio.gather(*[ended(sockets[name], index + 1, 8) for index, name in enumerate(names)])
    result = dict(zip(names, waits))
    for socket in sockets.values():
        await socket.close()
    for name in ["logout", "password", "delete", "expiry"]:
        assert result[name] is not None, f"{name}: the subscription outlived its session: {result}"
    assert result["other"] is None and result["kept"] is None, f"an untouched session's subscription ended: {result}"
    print(json.dumps({"ok": True, "seconds": result}))


asyncio.run(main())
