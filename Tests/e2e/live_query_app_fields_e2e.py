#!/usr/bin/env python3
"""LiveQuery and the fields of an app's own (docs/decisions/045), with an independent client
(PyPI `websockets`), run by Tests/GalleryAppTests/LiveQuery/LiveQueryAppFieldTests.swift.

usage: live_query_app_fields_e2e.py BASE_URL APP_ID MASTER_KEY ALICE_TOKEN ALICE_ID BOB_ID PHOTO_ID
Set up by the test: Photo has the app field `rating`; `_User` has `displayName` and `phone`, with
{"protectedFields":{"*":["phone"]}}; the class Note has `owner` (Pointer<_User>) and `secret`, with
{"*":["secret"],"userField:owner":[]}; every account has an email and a password hash. Checks:
alice's Photo events carry `rating`; she may subscribe to `_User` but not with a `where` on
`email` (102: events are never matched on it); her `_User` events carry `displayName`, never
another's `phone`, but her own; the master key's carry every phone; a Note's `secret` reaches her
only on the notes she owns; no message to her holds an email, a password hash or the
administrator flag. Prints one JSON summary line; exits non-zero with the reason on failure.
"""
import asyncio
import json
import sys
import urllib.request

import websockets

BASE, APP_ID, MASTER_KEY, ALICE_TOKEN, ALICE, BOB, PHOTO = sys.argv[1:8]
WS = BASE.replace("http://", "ws://") + "/parse"
SEEN_BY_ALICE = []


def rest(method, path, body):
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), method=method)
    request.add_header("X-Parse-Application-Id", APP_ID)
    request.add_header("X-Parse-Master-Key", MASTER_KEY)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


async def expect(ws, op, request_id=None, timeout=10):
    text = await asyncio.wait_for(ws.recv(), timeout)
    message = json.loads(text)
    if ws is ALICE_SOCKET[0]:
        SEEN_BY_ALICE.append(text)
    if message.get("op") != op or (request_id is not None and message.get("requestId") != request_id):
        raise SystemExit(f"expected {op} for {request_id}, got {message}")
    return message


ALICE_SOCKET = [None]


async def connect(ws, **keys):
    await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID, **keys}))
    await expect(ws, "connected")


async def subscribe(ws, request_id, class_name, where, op="subscribed"):
    await ws.send(json.dumps({"op": "subscribe", "requestId": request_id,
                              "query": {"className": class_name, "where": where}}))
    return await expect(ws, op, request_id)


def pointer(object_id):
    return {"__type": "Pointer", "className": "_User", "objectId": object_id}


async def main():
    async with websockets.connect(WS) as alice, websockets.connect(WS) as master:
        ALICE_SOCKET[0] = alice
        await connect(alice, sessionToken=ALICE_TOKEN)
        await connect(master, masterKey=MASTER_KEY)
        refused = await subscribe(alice, 1, "_User", {"email": "bob@example.org"}, op="error")
        assert refused["code"] == 102, refused
        await subscribe(alice, 2, "Photo", {})
        await subscribe(alice, 3, "_User", {})
        await subscribe(alice, 4, "Note", {})
        await subscribe(master, 5, "_User", {})

        rest("PUT", f"/parse/classes/Photo/{PHOTO}", {"rating": 4})
        photo = await expect(alice, "update", 2)
        assert photo["object"]["rating"] == 4 and photo["object"]["objectId"] == PHOTO, photo

        rest("PUT", f"/parse/users/{BOB}", {"displayName": "Bob B", "phone": "555-2"})
        bob = await expect(alice, "update", 3)
        assert bob["object"]["displayName"] == "Bob B" and bob["object"]["username"] == "bob", bob
        assert "phone" not in bob["object"] and "phone" not in bob.get("original", {}), bob
        told = await expect(master, "update", 5)
        assert told["object"]["phone"] == "555-2", told

        rest("PUT", f"/parse/users/{ALICE}", {"phone": "555-1"})
        own = await expect(alice, "update", 3)
        assert own["object"]["phone"] == "555-1" and own["object"]["objectId"] == ALICE, own
        await expect(master, "update", 5)

        rest("POST", "/parse/classes/Note", {"owner": pointer(ALICE), "secret": "mine"})
        mine = await expect(alice, "create", 4)
        assert mine["object"]["secret"] == "mine", mine
        rest("POST", "/parse/classes/Note", {"owner": pointer(BOB), "secret": "theirs"})
        theirs = await expect(alice, "create", 4)
        assert "secret" not in theirs["object"] and theirs["object"]["owner"]["objectId"] == BOB, theirs

    for text in SEEN_BY_ALICE:
        for word in ("@example.org", "scrypt", "secret-hash", "is_admin", "password", "555-2", "theirs"):
            assert word not in text, (word, text)
    print(json.dumps({"ok": True}))


asyncio.run(main())
