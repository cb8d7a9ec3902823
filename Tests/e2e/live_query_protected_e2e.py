#!/usr/bin/env python3
"""LiveQuery and a built-in class's protectedFields (docs/decisions/036), with an independent
client (PyPI `websockets`), run by Tests/GalleryAppTests/Classes/BuiltInClassPermissionsTests.swift.

usage: live_query_protected_e2e.py BASE_URL APP_ID MASTER_KEY SESSION_TOKEN GALLERY_ID
Gallery's permissions hide `name` from everyone ({"protectedFields":{"*":["name"]}}). Checks: a
user's subscription with a `where` on `name` is refused (119); their events about the gallery never
carry `name`, while the master key's carry it. Prints one JSON summary line; exits non-zero with
the reason on failure.
"""
import asyncio
import json
import sys
import urllib.request

import websockets

BASE, APP_ID, MASTER_KEY, SESSION, GALLERY = sys.argv[1:6]
WS = BASE.replace("http://", "ws://") + "/parse"


def rest(method, path, body):
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), method=method)
    request.add_header("X-Parse-Application-Id", APP_ID)
    request.add_header("X-Parse-Master-Key", MASTER_KEY)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


async def expect(ws, op, timeout=10):
    message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    if message.get("op") != op:
        raise SystemExit(f"expected {op}, got {message}")
    return message


async def connect(ws, **keys):
    await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID, **keys}))
    await expect(ws, "connected")


async def main():
    async with websockets.connect(WS) as user, websockets.connect(WS) as master:
        await connect(user, sessionToken=SESSION)
        await connect(master, masterKey=MASTER_KEY)
        await user.send(json.dumps({"op": "subscribe", "requestId": 1,
                                    "query": {"className": "Gallery", "where": {"name": "secret"}}}))
        refused = await expect(user, "error")
        assert refused["code"] == 119 and refused["requestId"] == 1, refused
        await user.send(json.dumps({"op": "subscribe", "requestId": 2, "query": {"className": "Gallery", "where": {}}}))
        await expect(user, "subscribed")
        await master.send(json.dumps({"op": "subscribe", "requestId": 3, "query": {"className": "Gallery", "where": {}}}))
        await expect(master, "subscribed")
        rest("PUT", f"/parse/classes/Gallery/{GALLERY}", {"name": "renamed secret"})
        seen = await expect(user, "update")
        assert "name" not in seen["object"] and "name" not in seen.get("original", {}), seen
        assert seen["object"]["objectId"] == GALLERY, seen
        told = await expect(master, "update")
        assert told["object"].get("name") == "renamed secret", told
    print(json.dumps({"ok": True}))


asyncio.run(main())
