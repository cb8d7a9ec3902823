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

from live_query_client import Server, expect, subscribe, subscribed

BASE, APP_ID, TOKEN_A, TOKEN_B, USER_B = sys.argv[1:6]
SERVER = Server(BASE, APP_ID)


async def subscriber(token):
    ws = await SERVER.socket(sessionToken=token)
    await subscribed(ws, 1, "Gallery", {})
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
    async with SERVER.open() as ws:
        await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID, "sessionToken": "r:not-a-session"}))
        bad = await expect(ws, "error")
        assert bad["code"] == 209, bad

    async with SERVER.open() as anonymous:
        await SERVER.connect(anonymous)
        await subscribe(anonymous, 1, "Gallery", {})
        refused = await expect(anonymous, "error")
        assert refused["code"] == 119 and refused["requestId"] == 1, refused

    a, b = await subscriber(TOKEN_A), await subscriber(TOKEN_B)
    as_a = {"X-Parse-Session-Token": TOKEN_A}
    await SERVER.call("POST", "/parse/classes/Gallery", {"name": "Private"}, headers=as_a)
    await SERVER.call("POST", "/parse/classes/Gallery", {"name": "Shared", "ACL": {USER_B: {"read": True}}}, headers=as_a)
    seen_a, seen_b = await asyncio.gather(created_names(a, 3), created_names(b, 3))
    for ws in (a, b):
        await ws.close()
    assert sorted(seen_a) == ["Private", "Shared"], seen_a
    assert seen_b == ["Shared"], seen_b
    print(json.dumps({"ok": True, "a": seen_a, "b": seen_b, "anonymous": "refused"}))


asyncio.run(main())
