#!/usr/bin/env python3
"""LiveQuery sees only what each subscriber may read (issue #15), with an independent client (PyPI
`websockets`), run by Tests/GalleryAppTests/OwnershipTests.swift against a real galleryd.

usage: live_query_owners_e2e.py BASE_URL APP_ID TOKEN_A TOKEN_B USER_B
Users A and B subscribe to Gallery; a client without a session is refused (119: without
`public_read` it may read no gallery). A creates a private gallery, then one whose ACL lets B
read. A must see both creates, B only the shared one; a bad session token is error 209. Prints one JSON summary line;
exits non-zero with the reason on failure.
"""
import asyncio
import json
import sys
import urllib.request

import websockets

BASE, APP_ID, TOKEN_A, TOKEN_B, USER_B = sys.argv[1:6]
WS = BASE.replace("http://", "ws://") + "/parse"


def rest(path, body, token):
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), method="POST")
    request.add_header("X-Parse-Application-Id", APP_ID)
    request.add_header("X-Parse-Session-Token", token)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


async def expect(ws, op, timeout=10):
    message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    if message.get("op") != op:
        raise SystemExit(f"expected {op}, got {message}")
    return message


async def subscriber(token):
    ws = await websockets.connect(WS)
    connect = {"op": "connect", "applicationId": APP_ID}
    if token:
        connect["sessionToken"] = token
    await ws.send(json.dumps(connect))
    await expect(ws, "connected")
    await ws.send(json.dumps({"op": "subscribe", "requestId": 1, "query": {"className": "Gallery", "where": {}}}))
    await expect(ws, "subscribed")
    return ws


async def created_names(ws, wait):
    names = []
    try:
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), wait))
            if message.get("op") == "create":
                names.append(message["object"]["name"])
    except asyncio.TimeoutError:
        return names


async def main():
    async with websockets.connect(WS) as ws:
        await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID, "sessionToken": "r:not-a-session"}))
        bad = await expect(ws, "error")
        assert bad["code"] == 209, bad

    async with websockets.connect(WS) as anonymous:
        await anonymous.send(json.dumps({"op": "connect", "applicationId": APP_ID}))
        await expect(anonymous, "connected")
        await anonymous.send(json.dumps({"op": "subscribe", "requestId": 1, "query": {"className": "Gallery", "where": {}}}))
        refused = await expect(anonymous, "error")
        assert refused["code"] == 119 and refused["requestId"] == 1, refused

    a, b = await subscriber(TOKEN_A), await subscriber(TOKEN_B)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, rest, "/parse/classes/Gallery", {"name": "Private"}, TOKEN_A)
    await loop.run_in_executor(None, rest, "/parse/classes/Gallery",
                               {"name": "Shared", "ACL": {USER_B: {"read": True}}}, TOKEN_A)
    seen_a, seen_b = await asyncio.gather(created_names(a, 3), created_names(b, 3))
    for ws in (a, b):
        await ws.close()
    assert sorted(seen_a) == ["Private", "Shared"], seen_a
    assert seen_b == ["Shared"], seen_b
    print(json.dumps({"ok": True, "a": seen_a, "b": seen_b, "anonymous": "refused"}))


asyncio.run(main())
