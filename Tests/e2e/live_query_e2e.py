#!/usr/bin/env python3
"""LiveQuery end to end with an independent client (PyPI `websockets`), run by
Tests/GalleryAppTests/LiveQueryTests.swift against a real galleryd.

usage: live_query_e2e.py BASE_URL APP_ID JPEG_PATH MASTER_KEY
The REST calls and the subscriptions use the master key (the app id alone reads nothing).
Checks: bad keys -> error 4; subscribe before connect -> error 2; an unsupported operator ->
error 102 with its requestId; `create` for a photo made through REST, then `update`s until
it is ready and `enter` on a subscription to ready photos. Prints one JSON summary line;
exits non-zero with the reason on failure.
"""
import asyncio
import json
import sys

from live_query_client import Server, expect, subscribe, subscribed

BASE, APP_ID, JPEG, MASTER_KEY = sys.argv[1:5]
SERVER = Server(BASE, APP_ID, MASTER_KEY)


async def main():
    async with SERVER.open() as ws:
        await subscribe(ws, 1, "Photo", {})
        early = await expect(ws, "error")
        assert early["code"] == 2, early
        await ws.send(json.dumps({"op": "connect", "applicationId": "wrong"}))
        bad = await expect(ws, "error")
        assert bad["code"] == 4, bad

    async with SERVER.open() as ws:
        connected = await SERVER.connect(ws, masterKey=MASTER_KEY)
        client_id = connected["clientId"]
        await subscribe(ws, 7, "Photo", {"title": {"$text": {"$search": "x"}}})
        refused = await expect(ws, "error")
        assert refused["code"] == 102 and refused["requestId"] == 7, refused
        assert (await subscribed(ws, 1, "Photo", {"title": {"$regex": "^Beach"}}))["requestId"] == 1
        ready = {"status": "ready", "width": {"$gt": 10}}
        assert (await subscribed(ws, 2, "Photo", ready, keys=["status", "title"]))["requestId"] == 2
        # An event for another title must not arrive on subscription 1: it is created first.
        with open(JPEG, "rb") as f:
            jpeg = f.read()
        loop = asyncio.get_running_loop()
        upload = await SERVER.call("POST", "/parse/files/live.jpg", jpeg, "image/jpeg")
        created = await SERVER.call("POST", "/parse/classes/Photo",
                                    {"original": {"__type": "File", "name": upload["name"]}, "title": "Beach at noon"})
        object_id = created["objectId"]
        seen = []
        ready_update = enter = None
        deadline = loop.time() + 60
        while (ready_update is None or enter is None) and loop.time() < deadline:
            message = json.loads(await asyncio.wait_for(ws.recv(), max(1, deadline - loop.time())))
            assert message["clientId"] == client_id, message
            obj = message.get("object", {})
            assert obj.get("objectId") == object_id and obj.get("className") == "Photo", message
            seen.append((message["op"], message["requestId"], obj.get("status")))
            if message["op"] == "update" and message["requestId"] == 1 and obj.get("status") == "ready":
                ready_update = message
                assert message["original"]["status"] != "ready", message
                assert obj["thumbnail"]["__type"] == "File", obj
            if message["requestId"] == 2:
                assert message["op"] == "enter", message
                assert set(obj) <= {"className", "objectId", "createdAt", "updatedAt", "status", "title"}, obj
                enter = message
        if ready_update is None or enter is None:
            raise SystemExit(f"missing events, saw {seen}")
        if seen[0][:2] != ("create", 1):
            raise SystemExit(f"first event was not create: {seen}")
        await ws.send(json.dumps({"op": "unsubscribe", "requestId": 1}))
        await expect(ws, "unsubscribed")
        print(json.dumps({"ok": True, "events": seen}))


asyncio.run(main())
