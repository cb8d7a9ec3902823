"""The steps every LiveQuery end-to-end script takes before its scenario, with an independent client
(PyPI `websockets`): the REST call, the socket's `connect`, a `subscribe` frame, and waiting for the
next frame of an op (or for none). The scripts beside this file import it (Python puts a script's
folder on its path); each keeps only its own scenario.
"""
import asyncio
import functools
import json
import urllib.request

import websockets


class Server:
    """One galleryd as a script sees it: its REST base URL, its LiveQuery socket (`/parse`) and the
    app id; with `master_key`, every REST call carries it."""

    def __init__(self, base, app_id, master_key=None):
        self.base = base
        self.app_id = app_id
        self.master_key = master_key
        self.socket_url = base.replace("http://", "ws://") + "/parse"

    def rest(self, method, path, body=None, content_type="application/json", headers=None):
        """One REST call, its JSON answer; `body` is sent as is when bytes, as JSON otherwise (None:
        no body); `headers` are added to the app id's (and the master key's)."""
        if body is not None and not isinstance(body, bytes):
            body = json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=body, method=method)
        request.add_header("X-Parse-Application-Id", self.app_id)
        if self.master_key is not None:
            request.add_header("X-Parse-Master-Key", self.master_key)
        request.add_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    async def call(self, *args, **kwargs):
        """`rest` on the executor, so the sockets keep being read while it waits."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(self.rest, *args, **kwargs))

    def open(self, **options):
        """A socket to the LiveQuery path, not yet connected (`await` it, or `async with` it)."""
        return websockets.connect(self.socket_url, **options)

    async def socket(self, max_size=2**20, **keys):
        """A socket that has sent `connect` with the app id and `keys` (sessionToken, masterKey) and
        been answered `connected`."""
        ws = await self.open(max_size=max_size)
        await self.connect(ws, **keys)
        return ws

    async def connect(self, ws, **keys):
        """Sends `connect` with the app id and `keys` on `ws`; returns the `connected` frame."""
        await ws.send(json.dumps({"op": "connect", "applicationId": self.app_id, **keys}))
        return await expect(ws, "connected")


async def subscribe(ws, request_id, class_name, where, op="subscribe", **query):
    """Sends a `subscribe` (or `update`) frame for `class_name` where `where` (`query`: more of the
    query, e.g. keys); the answer is for the caller to expect."""
    text = json.dumps({"op": op, "requestId": request_id, "query": {"className": class_name, "where": where, **query}})
    # The server takes frames of up to 64 KiB: a larger message goes in fragments.
    await ws.send([text[i:i + 32768] for i in range(0, len(text), 32768)] if len(text) > 32768 else text)


async def subscribed(ws, request_id, class_name, where, **query):
    """Subscribes and expects `subscribed`; returns that frame."""
    await subscribe(ws, request_id, class_name, where, **query)
    return await expect(ws, "subscribed")


async def expect(ws, op, timeout=10):
    """The next frame, which must be of `op` within `timeout` seconds (else the script exits with why)."""
    message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    if message.get("op") != op:
        raise SystemExit(f"expected {op}, got {message}")
    return message


async def expect_nothing(ws, why, seconds=1.5):
    """No frame within `seconds` (else the script exits with `why` and the frame)."""
    try:
        message = await asyncio.wait_for(ws.recv(), seconds)
    except asyncio.TimeoutError:
        return
    raise SystemExit(f"expected nothing ({why}), got {message}")
