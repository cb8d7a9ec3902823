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

from live_query_client import Server, expect, expect_nothing, subscribe, subscribed

BASE, APP_ID, MASTER_KEY, JPEG, TOKEN_A, ALICE, TOKEN_B, BRUNO, BRUNO_PHOTO, DATABASE_URL = sys.argv[1:11]
SERVER = Server(BASE, APP_ID, MASTER_KEY)
VIEW_FIELDS = {"className", "objectId", "createdAt", "updatedAt", "filename", "thumbnailURLString", "caption"}


async def main():
    sea = {"caption": {"$regex": "^sea"}}
    async with await SERVER.socket(sessionToken=TOKEN_A) as a:
        for request_id, bad in [(5, {"title": "sea"}), (6, {"nope": 1})]:
            await subscribe(a, request_id, "Resource", bad)
            refused = await expect(a, "error")
            assert refused["code"] == 102 and refused["requestId"] == request_id, refused
        await subscribed(a, 1, "Resource", sea)

        with open(JPEG, "rb") as f:
            upload = await SERVER.call("POST", "/parse/files/view.jpg", f.read(), "image/jpeg")
        created = await SERVER.call("POST", "/parse/classes/Photo", {
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
                await SERVER.call("DELETE", f"/parse/classes/Photo/{photo}")
            elif change == "sql delete":
                subprocess.run(["psql", DATABASE_URL, "-Xqc", f"delete from photos where object_id = '{photo}'"],
                               check=True, capture_output=True)
            elif change is not None:
                await SERVER.call("PUT", f"/parse/classes/Photo/{photo}", change)
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
        await SERVER.call("PUT", f"/parse/classes/Photo/{BRUNO_PHOTO}", {"title": "sea private"})
        await expect_nothing(a, "a photo Alice may not read")
        await SERVER.call("PUT", f"/parse/classes/Photo/{BRUNO_PHOTO}", {"ACL": {"*": {"read": True}}})
        entered = await expect(a, "enter")
        assert entered["object"]["objectId"] == BRUNO_PHOTO and entered["object"]["caption"] == "sea private"
        seen.append("enter")

        # The view's find becomes Bruno's alone: Alice's subscription falls silent, a new one is refused.
        await SERVER.call("PUT", "/parse/schemas/Resource", {"classLevelPermissions": {
            "find": {BRUNO: True}, "get": {"*": True}, "count": {"*": True}}})
        await SERVER.call("PUT", f"/parse/classes/Photo/{BRUNO_PHOTO}", {"title": "sea again"})
        await expect_nothing(a, "the view's find is no longer Alice's")
        await subscribe(a, 2, "Resource", sea)
        refused = await expect(a, "error")
        assert refused["code"] == 119 and refused["requestId"] == 2, refused
    async with await SERVER.socket(sessionToken=TOKEN_B) as b:
        await subscribed(b, 1, "Resource", sea)
        await SERVER.call("PUT", f"/parse/classes/Photo/{BRUNO_PHOTO}", {"title": "sea for bruno"})
        update = await expect(b, "update")
        assert update["object"]["caption"] == "sea for bruno" and update["original"]["caption"] == "sea again"
    print(json.dumps({"ok": True, "events": seen}))


asyncio.run(main())
