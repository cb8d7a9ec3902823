#!/usr/bin/env python3
"""LiveQuery's bounds (issue #25, item 5) with an independent client (PyPI `websockets`), run by
Tests/GalleryAppTests/LiveQueryBoundsTests.swift against a galleryd configured with small limits.

usage: live_query_bounds_e2e.py BASE_URL APP_ID SESSION_TOKEN MAX_SUBSCRIPTIONS CONNECT_TIMEOUT_S MAX_SOCKETS
Checks: a socket without `connect` gets an error frame and is closed (1008) after the timeout; a
socket holds at most MAX_SUBSCRIPTIONS (the next is error 155, a replaced one is not counted, an
unsubscribe frees a place); `where` beyond the REST caps ($in values, nesting, size, string
length) is error 102; an address holds at most MAX_SOCKETS sockets (the next upgrade is 429).
Prints one JSON summary line; exits non-zero with the reason on failure.
"""
import asyncio
import json
import sys
import time

import websockets

from live_query_client import Server, expect, subscribe

BASE, APP_ID, TOKEN = sys.argv[1], sys.argv[2], sys.argv[3]
MAX_SUBSCRIPTIONS, CONNECT_TIMEOUT, MAX_SOCKETS = int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
SERVER = Server(BASE, APP_ID)


async def answer_to(ws, request_id, where, op="subscribe"):
    """Subscribes (or updates) to Photo where `where`; the next frame, whatever its op."""
    await subscribe(ws, request_id, "Photo", where, op=op)
    return json.loads(await asyncio.wait_for(ws.recv(), 10))


async def main():
    summary = {}
    # No connect: an error frame, then the server closes with 1008.
    started = time.time()
    async with SERVER.open() as idle:
        error = await expect(idle, "error", timeout=CONNECT_TIMEOUT + 10)
        try:
            await asyncio.wait_for(idle.recv(), 10)
            raise SystemExit("the socket without connect stayed open")
        except websockets.exceptions.ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else None
            assert code == 1008, f"close code {code}"
    summary["idle_closed_after_s"] = round(time.time() - started, 1)
    assert summary["idle_closed_after_s"] >= CONNECT_TIMEOUT - 0.2, summary

    # The subscription cap.
    ws = await SERVER.socket(max_size=None, sessionToken=TOKEN)
    for request_id in range(1, MAX_SUBSCRIPTIONS + 1):
        answer = await answer_to(ws, request_id, {})
        assert answer["op"] == "subscribed", answer
    over = await answer_to(ws, MAX_SUBSCRIPTIONS + 1, {})
    assert over["op"] == "error" and over["code"] == 155 and over["requestId"] == MAX_SUBSCRIPTIONS + 1, over
    replaced = await answer_to(ws, 1, {"title": "x"}, op="update")
    assert replaced["op"] == "updated", replaced
    await ws.send(json.dumps({"op": "unsubscribe", "requestId": 1}))
    await expect(ws, "unsubscribed")
    again = await answer_to(ws, MAX_SUBSCRIPTIONS + 1, {})
    assert again["op"] == "subscribed", again
    await ws.send(json.dumps({"op": "unsubscribe", "requestId": 2}))
    await expect(ws, "unsubscribed")

    # The REST caps on where.
    nested = {"title": "x"}
    for _ in range(20):
        nested = {"$or": [nested]}
    for name, where in [
        ("in", {"title": {"$in": [f"t{i}" for i in range(1001)]}}),
        ("depth", nested),
        ("size", {"title": {"$in": ["y" * 200 + str(i) for i in range(900)]}}),
        ("string", {"title": "z" * 9000}),
    ]:
        refused = await answer_to(ws, 50, where)
        assert refused["op"] == "error" and refused["code"] == 102, (name, refused)
    summary["where_refused"] = 4

    # Sockets per address: `ws` is one; fill up to the cap, then the next upgrade is 429.
    held = [ws]
    for _ in range(MAX_SOCKETS - 1):
        held.append(await SERVER.open())
    try:
        extra = await SERVER.open()
        await extra.close()
        raise SystemExit("an upgrade past the socket cap was accepted")
    except SystemExit:
        raise
    except Exception as refused:  # InvalidStatus (websockets >= 14) or InvalidStatusCode
        status = getattr(getattr(refused, "response", None), "status_code", None) or getattr(refused, "status_code", None)
        assert status == 429, f"{type(refused).__name__}: {refused}"
    for socket in held:
        await socket.close()
    await asyncio.sleep(0.5)
    # Closed sockets give their places back.
    async with SERVER.open() as fresh:
        await SERVER.connect(fresh)
    summary["ok"] = True
    print(json.dumps(summary))


asyncio.run(main())
