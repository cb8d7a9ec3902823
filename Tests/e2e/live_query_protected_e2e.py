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

from live_query_client import Server, expect, subscribe, subscribed

BASE, APP_ID, MASTER_KEY, SESSION, GALLERY = sys.argv[1:6]
SERVER = Server(BASE, APP_ID, MASTER_KEY)


async def main():
    async with SERVER.open() as user, SERVER.open() as master:
        await SERVER.connect(user, sessionToken=SESSION)
        await SERVER.connect(master, masterKey=MASTER_KEY)
        await subscribe(user, 1, "Gallery", {"name": "secret"})
        refused = await expect(user, "error")
        assert refused["code"] == 119 and refused["requestId"] == 1, refused
        await subscribed(user, 2, "Gallery", {})
        await subscribed(master, 3, "Gallery", {})
        SERVER.rest("PUT", f"/parse/classes/Gallery/{GALLERY}", {"name": "renamed secret"})
        seen = await expect(user, "update")
        assert "name" not in seen["object"] and "name" not in seen.get("original", {}), seen
        assert seen["object"]["objectId"] == GALLERY, seen
        told = await expect(master, "update")
        assert told["object"].get("name") == "renamed secret", told
    print(json.dumps({"ok": True}))


asyncio.run(main())
