#!/usr/bin/env python3
"""LiveQuery on a view (`[[views]]`, issue 27 item 5), with an independent client (PyPI
`websockets`), run by Tests/GalleryAppTests/Classes/PhotoViewLiveQueryTests.swift against a real
galleryd whose view `Resource` reads Photo's filename, thumbnail.url and title (as `caption`).

usage: live_query_view_e2e.py BASE_URL APP_ID MASTER_KEY JPEG TOKEN_ALICE ALICE_ID TOKEN_BRUNO BRUNO_ID BRUNO_PHOTO
                             DATABASE_URL
Alice subscribes to `Resource` where `caption` starts with "sea". Photos are changed with the
master key. Alice's own photo sends create, update, leave, enter, leave when trashed (a view
shows no trashed photo, as a find of it), enter when restored, and delete when its row goes while
it matches (deleted in SQL with DATABASE_URL: a purge only takes trashed photos); each object
under the view's names only (className `Resource`, no `title`, `owner` or `ACL`). Bruno's private photo sends nothing until its ACL lets anyone read it
(enter). Names the view lacks are 102. Once the view's `find` is Bruno's alone, Alice receives
nothing more and a new subscription of hers is refused (119). Prints one JSON summary line; exits
non-zero with the reason on failure.
"""
import asyncio
import json
import subprocess
import sys
import urllib.request

import websockets

BASE, APP_ID, MASTER_KEY, JPEG, TOKEN_A, ALICE, TOKEN_B, BRUNO, BRUNO_PHOTO, DATABASE_URL = sys.argv[1:11]
WS = BASE.replace("http://", "ws://") + "/parse"
VIEW_FIELDS = {"className", "objectId", "createdAt", "updatedAt", "filename", "thumbnailURLString", "caption"}


def rest(method, path, body=None, content_type="application/json"):
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=body, method=method)
    request.add_header("X-Parse-Application-Id", APP_ID)
    request.add_header("X-Parse-Master-Key", MASTER_KEY)
    request.add_header("Content-Type", content_type)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


async def expect(ws, op, timeout=10):
    message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    if message.get("op") != op:
        raise SystemExit(f"expected {op}, got {message}")
    return message


async def expect_nothing(ws, why, seconds=1.5):
    try:
        message = await asyncio.wait_for(ws.recv(), seconds)
    except asyncio.TimeoutError:
        return
    raise SystemExit(f"expected nothing ({why}), got {message}")


async def connect(token):
    ws = await websockets.connect(WS)
    await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID, "sessionToken": token}))
    await expect(ws, "connected")
    return ws


async def main():
    loop = asyncio.get_running_loop()

    async def call(*args):
        return await loop.run_in_executor(None, rest, *args)

    query = {"className": "Resource", "where": {"caption": {"$regex": "^sea"}}}
    async with await connect(TOKEN_A) as a:
        for request_id, bad in [(5, {"title": "sea"}), (6, {"nope": 1})]:
            await a.send(json.dumps({"op": "subscribe", "requestId": request_id,
                                     "query": {"className": "Resource", "where": bad}}))
            refused = await expect(a, "error")
            assert refused["code"] == 102 and refused["requestId"] == request_id, refused
        await a.send(json.dumps({"op": "subscribe", "requestId": 1, "query": query}))
        await expect(a, "subscribed")

        with open(JPEG, "rb") as f:
            upload = await call("POST", "/parse/files/view.jpg", f.read(), "image/jpeg")
        created = await call("POST", "/parse/classes/Photo", {
            "original": {"__type": "File", "name": upload["name"]}, "title": "sea one",
            "owner": {"__type": "Pointer", "className": "_User", "objectId": ALICE}})
        photo = created["objectId"]
        seen = []
        steps = [(None, [("create", 1)], "sea one"), ({"title": "sea two"}, [("update", 1)], "sea two"),
                 ({"title": "land"}, [("leave", 1)], "land"), ({"title": "sea three"}, [("enter", 1)], "sea three"),
                 ("trash", [("leave", 1)], "sea three"), ({"deletedAt": {"__op": "Delete"}}, [("enter", 1)], "sea three"),
                 ("sql delete", [("delete", 1)], "sea three")]
        for change, ops, caption in steps:
            if change == "trash":
                await call("DELETE", f"/parse/classes/Photo/{photo}")
            elif change == "sql delete":
                subprocess.run(["psql", DATABASE_URL, "-Xqc", f"delete from photos where object_id = '{photo}'"],
                               check=True, capture_output=True)
            elif change is not None:
                await call("PUT", f"/parse/classes/Photo/{photo}", change)
            got = []
            for _ in ops:
                message = json.loads(await asyncio.wait_for(a.recv(), 10))
                op = message.get("op")
                obj = message["object"]
                assert obj["objectId"] == photo and obj["className"] == "Resource", message
                assert set(obj) <= VIEW_FIELDS and obj["caption"] == caption and "filename" in obj, message
                assert "title" not in obj and "owner" not in obj and "ACL" not in obj, message
                if op in ("update", "leave", "enter"):
                    assert message["original"]["className"] == "Resource" and set(message["original"]) <= VIEW_FIELDS
                got.append((op, message["requestId"]))
                seen.append(op)
            if sorted(got) != sorted(ops):
                raise SystemExit(f"expected {ops}, got {got}")

        # Bruno's private photo: nothing, until anyone may read it.
        await call("PUT", f"/parse/classes/Photo/{BRUNO_PHOTO}", {"title": "sea private"})
        await expect_nothing(a, "a photo Alice may not read")
        await call("PUT", f"/parse/classes/Photo/{BRUNO_PHOTO}", {"ACL": {"*": {"read": True}}})
        entered = await expect(a, "enter")
        assert entered["object"]["objectId"] == BRUNO_PHOTO and entered["object"]["caption"] == "sea private"
        seen.append("enter")

        # The view's find becomes Bruno's alone: Alice's subscription falls silent, a new one is refused.
        await call("PUT", "/parse/schemas/Resource", {"classLevelPermissions": {
            "find": {BRUNO: True}, "get": {"*": True}, "count": {"*": True}}})
        await call("PUT", f"/parse/classes/Photo/{BRUNO_PHOTO}", {"title": "sea again"})
        await expect_nothing(a, "the view's find is no longer Alice's")
        await a.send(json.dumps({"op": "subscribe", "requestId": 2, "query": query}))
        refused = await expect(a, "error")
        assert refused["code"] == 119 and refused["requestId"] == 2, refused
    async with await connect(TOKEN_B) as b:
        await b.send(json.dumps({"op": "subscribe", "requestId": 1, "query": query}))
        await expect(b, "subscribed")
        await call("PUT", f"/parse/classes/Photo/{BRUNO_PHOTO}", {"title": "sea for bruno"})
        update = await expect(b, "update")
        assert update["object"]["caption"] == "sea for bruno" and update["original"]["caption"] == "sea again"
    print(json.dumps({"ok": True, "events": seen}))


asyncio.run(main())
