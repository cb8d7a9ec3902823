#!/usr/bin/env python3
"""LiveQuery on a custom class (issue 27), with an independent client (PyPI `websockets`), run by
Tests/GalleryAppTests/Classes/CustomLiveQueryTests.swift against a real galleryd.

usage: live_query_custom_e2e.py BASE_URL APP_ID MASTER_KEY TOKEN_A TOKEN_B
The class `Note` lets user A find (its class-level permissions), not user B. B's subscription is
refused (119); A subscribes to notes with a high score and sees, for notes written with the master
key (`score > 1.5`: Linux Foundation reads a JSON 1 as a Bool): `create` of a matching note, `update` of it, `leave` when it stops matching, `enter` when it
matches again, `delete`; a note that never matches sends nothing. Prints one JSON summary line;
exits non-zero with the reason on failure.
"""
import asyncio
import json
import sys

from live_query_client import Server, expect, subscribe, subscribed

BASE, APP_ID, MASTER_KEY, TOKEN_A, TOKEN_B = sys.argv[1:6]
SERVER = Server(BASE, APP_ID, MASTER_KEY)


async def main():
    high = {"score": {"$gt": 1.5}}
    async with await SERVER.socket(sessionToken=TOKEN_B) as b:
        await subscribe(b, 1, "Note", high)
        refused = await expect(b, "error")
        assert refused["code"] == 119, refused
    async with await SERVER.socket(sessionToken=TOKEN_A) as a:
        await subscribed(a, 1, "Note", high)
        await subscribe(a, 2, "Nope", {})
        unknown = await expect(a, "error")
        assert unknown["code"] == 102 and unknown["requestId"] == 2, unknown

        quiet = await SERVER.call("POST", "/parse/classes/Note", {"text": "low", "score": 0})
        note = await SERVER.call("POST", "/parse/classes/Note", {"text": "high", "score": 2})
        object_id = note["objectId"]
        seen = []
        for body, op in [(None, "create"), ({"score": 3}, "update"), ({"score": 0}, "leave"),
                         ({"score": 5}, "enter"), ("delete", "delete")]:
            if body == "delete":
                await SERVER.call("DELETE", f"/parse/classes/Note/{object_id}")
            elif body is not None:
                await SERVER.call("PUT", f"/parse/classes/Note/{object_id}", body)
            message = await expect(a, op)
            obj = message["object"]
            assert obj["objectId"] == object_id and obj["className"] == "Note", message
            if op in ("create", "update", "enter"):
                assert obj["text"] == "high" and obj["score"] > 1.5, message
            seen.append(op)
        assert quiet["objectId"] != object_id
        print(json.dumps({"ok": True, "events": seen}))


asyncio.run(main())
