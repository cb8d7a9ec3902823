#!/usr/bin/env python3
"""LiveQuery on a custom class (issue 27), with an independent client (PyPI `websockets`), run by
Tests/GalleryAppTests/Classes/CustomLiveQueryTests.swift against a real galleryd.

usage: live_query_custom_e2e.py BASE_URL APP_ID MASTER_KEY TOKEN_A TOKEN_B
The class `Note` lets user A find (its class-level permissions), not user B. B's subscription is
refused (119); A subscribes to notes with `score > 1` and sees, for notes written with the master
key: `create` of a matching note, `update` of it, `leave` when it stops matching, `enter` when it
matches again, `delete`; a note that never matches sends nothing. Prints one JSON summary line;
exits non-zero with the reason on failure.
"""
import asyncio
import json
import sys
import urllib.request

import websockets

BASE, APP_ID, MASTER_KEY, TOKEN_A, TOKEN_B = sys.argv[1:6]
WS = BASE.replace("http://", "ws://") + "/parse"


def rest(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(BASE + path, data=data, method=method)
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


async def connect(token):
    ws = await websockets.connect(WS)
    await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID, "sessionToken": token}))
    await expect(ws, "connected")
    return ws


async def main():
    loop = asyncio.get_running_loop()
    query = {"className": "Note", "where": {"score": {"$gt": 1}}}
    async with await connect(TOKEN_B) as b:
        await b.send(json.dumps({"op": "subscribe", "requestId": 1, "query": query}))
        refused = await expect(b, "error")
        assert refused["code"] == 119, refused
    async with await connect(TOKEN_A) as a:
        await a.send(json.dumps({"op": "subscribe", "requestId": 1, "query": query}))
        await expect(a, "subscribed")
        await a.send(json.dumps({"op": "subscribe", "requestId": 2, "query": {"className": "Nope", "where": {}}}))
        unknown = await expect(a, "error")
        assert unknown["code"] == 102 and unknown["requestId"] == 2, unknown

        quiet = await loop.run_in_executor(None, rest, "POST", "/parse/classes/Note", {"text": "low", "score": 0})
        note = await loop.run_in_executor(None, rest, "POST", "/parse/classes/Note", {"text": "high", "score": 2})
        object_id = note["objectId"]
        seen = []
        for body, op in [(None, "create"), ({"score": 3}, "update"), ({"score": 0}, "leave"),
                         ({"score": 5}, "enter"), ("delete", "delete")]:
            if body == "delete":
                await loop.run_in_executor(None, rest, "DELETE", f"/parse/classes/Note/{object_id}")
            elif body is not None:
                await loop.run_in_executor(None, rest, "PUT", f"/parse/classes/Note/{object_id}", body)
            message = await expect(a, op)
            obj = message["object"]
            assert obj["objectId"] == object_id and obj["className"] == "Note", message
            if op in ("create", "update", "enter"):
                assert obj["text"] == "high" and obj["score"] > 1, message
            seen.append(op)
        assert quiet["objectId"] != object_id
        print(json.dumps({"ok": True, "events": seen}))


asyncio.run(main())
