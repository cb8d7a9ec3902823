"""Real clients of a galleryd whose originals are a HEIC and a PNG (issue #28), each as it calls the
server: parse_rest's upload request and its Photo objects, a LiveQuery client (PyPI `websockets`)
seeing both photos become ready, boto3 reading the originals from the S3-style bucket (type, ETag,
Range, HEAD), and flickrapi reading their sizes and Flickr's `originalformat`.

qs-parse-rest's `File.save()` cannot upload on Python 3 (it builds its `Request` from the URL
encoded to bytes, which urllib refuses: "unknown url type: b'http"), against Parse Server too; its
request is sent here as it builds it (the name as given, `Content-type` from `mimetypes` by the
name, the app id, REST key and master key headers), and the rest goes through the library.

Usage: formats_clients_e2e.py BASE_URL APP_ID REST_KEY MASTER_KEY HEIC_PATH PNG_PATH — prints
{"ok": true, …} and exits 0 on success.
"""
import asyncio
import hashlib
import json
import mimetypes
import os
import sys
import urllib.request

base, app_id, rest_key, master_key, heic_path, png_path = sys.argv[1:7]
os.environ["PARSE_API_ROOT"] = base + "/parse"

import boto3  # noqa: E402
import flickrapi  # noqa: E402
from botocore import UNSIGNED  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from live_query_client import Server, subscribed  # noqa: E402
from parse_rest.connection import MasterKey, register  # noqa: E402 (reads PARSE_API_ROOT)
from parse_rest.datatypes import File, Object  # noqa: E402

register(app_id, rest_key)
flickrapi.FlickrAPI.REST_URL = base + "/services/rest/"


class Photo(Object):
    pass


class Gallery(Object):
    pass


class GalleryItem(Object):
    pass


def expect(condition, message):
    if not condition:
        print(json.dumps({"ok": False, "failed": message}, default=str))
        sys.exit(1)


def read(path):
    with open(path, "rb") as f:
        return f.read()


FILES = {
    "heic": ("IMG_0001.HEIC", read(heic_path), "image/heic"),
    "png": ("Screenshot 2026-11-28.png", read(png_path), "image/png"),
}


def upload_as_parse_rest(name, content):
    """parse_rest's File(name, content).save() request: POST /files/<name>, the body as it is."""
    mimetype = mimetypes.guess_type(name)[0]
    request = urllib.request.Request(
        base + "/parse/files/" + urllib.request.quote(name), data=content, method="POST",
        headers={"Content-type": mimetype, "X-Parse-Application-Id": app_id, "X-Parse-REST-API-Key": rest_key,
                 "X-Parse-Master-Key": master_key})
    with urllib.request.urlopen(request, timeout=30) as response:
        expect(response.status == 201, "upload %s: %s" % (name, response.status))
        return json.loads(response.read())


async def uploads_become_ready():
    """Uploads both files, creates their photos with parse_rest while a LiveQuery client watches
    ready photos; returns {ext: (objectId, the photo's `enter` event)}."""
    server = Server(base, app_id, master_key)
    async with server.open() as ws:
        await server.connect(ws, masterKey=master_key)
        await subscribed(ws, 1, "Photo", {"status": "ready"})
        loop = asyncio.get_running_loop()
        with MasterKey(master_key):
            gallery = Gallery(name="From the phone", ACL={"*": {"read": True}})
            await loop.run_in_executor(None, gallery.save)
        photos = {}
        for ext, (name, content, _) in FILES.items():
            uploaded = await loop.run_in_executor(None, upload_as_parse_rest, name, content)
            sha = hashlib.sha256(content).hexdigest()
            expect(uploaded["name"] == "%s.%s" % (sha, ext), "%s: uploaded as %r" % (name, uploaded))
            expect(uploaded["url"].endswith("/bucket/originals/%s.%s" % (sha, ext)), uploaded)
            with MasterKey(master_key):
                photo = Photo(original=File(uploaded["name"], url=uploaded["url"]), title="From parse_rest " + ext)
                await loop.run_in_executor(None, photo.save)
                # In a gallery anyone may read, so that Flickr's API (an api_key alone) shows it.
                await loop.run_in_executor(None, GalleryItem(gallery=gallery, photo=photo).save)
            expect(photo.objectId, "%s: no objectId: %r" % (ext, photo.__dict__))
            photos[photo.objectId] = ext
        events = {}
        deadline = loop.time() + 90
        while len(events) < len(photos) and loop.time() < deadline:
            message = json.loads(await asyncio.wait_for(ws.recv(), max(1, deadline - loop.time())))
            obj = message.get("object", {})
            if message.get("op") == "enter" and obj.get("objectId") in photos:
                events[photos[obj["objectId"]]] = (obj["objectId"], obj)
        expect(len(events) == len(photos), "ready events: %r of %r" % (sorted(events), photos))
        return events


ready = asyncio.run(uploads_become_ready())
for ext, (object_id, event) in ready.items():
    name, content, content_type = FILES[ext]
    sha = hashlib.sha256(content).hexdigest()
    # The LiveQuery event's photo: the original's type and name, JPEG derivatives.
    expect(event.get("contentType") == content_type, "%s: event %r" % (ext, event))
    expect(event["original"]["name"] == "%s.%s" % (sha, ext), "%s: event original %r" % (ext, event["original"]))
    expect(event["thumbnail"]["url"].split("?")[0].endswith(".jpg"), "%s: event thumbnail %r" % (ext, event))

    # parse_rest reads the photo back: its File carries the original's URL.
    with MasterKey(master_key):
        fetched = Photo.Query.get(objectId=object_id)
    expect(fetched.contentType == content_type and fetched.status == "ready", fetched.__dict__)
    expect(fetched.original.url.endswith("/bucket/originals/%s.%s" % (sha, ext)), fetched.original.__dict__)

    # boto3, unsigned (the bucket is public), path-style: GET, HEAD and a Range, as S3 answers them.
    s3 = boto3.client("s3", endpoint_url=base, region_name="us-east-1",
                      config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}))
    key = "originals/%s.%s" % (sha, ext)
    whole = s3.get_object(Bucket="bucket", Key=key)
    body = whole["Body"].read()
    expect(body == content, "%s: boto3 read %d bytes, not the original's %d" % (ext, len(body), len(content)))
    expect(whole["ContentType"] == content_type, "%s: boto3 ContentType %r" % (ext, whole["ContentType"]))
    expect(whole["ContentLength"] == len(content) and whole["ETag"].startswith('"'), whole)
    head = s3.head_object(Bucket="bucket", Key=key)
    expect(head["ContentType"] == content_type and head["ETag"] == whole["ETag"], head)
    part = s3.get_object(Bucket="bucket", Key=key, Range="bytes=100-299")
    expect(part["ResponseMetadata"]["HTTPStatusCode"] == 206, part["ResponseMetadata"])
    expect(part["ContentRange"] == "bytes 100-299/%d" % len(content), part["ContentRange"])
    expect(part["Body"].read() == content[100:300] and part["ContentType"] == content_type, "%s: range" % ext)
    try:
        s3.get_object(Bucket="bucket", Key=key, IfNoneMatch=whole["ETag"])
        expect(False, "%s: If-None-Match with the ETag did not answer 304" % ext)
    except ClientError as error:
        expect(error.response["Error"]["Code"] == "304", error.response)

    # flickrapi: the Original size is the original, in its own format; the others are JPEGs.
    flickr = flickrapi.FlickrAPI(app_id, "not-checked-secret", format="parsed-json", cache=False, store_token=False)
    info = flickr.photos.getInfo(photo_id=object_id)
    expect(info["photo"]["originalformat"] == ext, "%s: originalformat %r" % (ext, info["photo"]))
    sizes = flickr.photos.getSizes(photo_id=object_id)["sizes"]["size"]
    original = [s for s in sizes if s["label"] == "Original"]
    expect(len(original) == 1 and original[0]["source"].endswith("_o." + ext), "%s: sizes %r" % (ext, sizes))
    with urllib.request.urlopen(original[0]["source"]) as response:
        expect(response.headers["Content-Type"] == content_type and response.read() == content,
               "%s: the Original is %s" % (ext, response.headers["Content-Type"]))
    small = [s for s in sizes if s["label"] == "Small"][0]
    expect(small["source"].endswith(".jpg"), small)
    with urllib.request.urlopen(small["source"]) as response:
        expect(response.headers["Content-Type"] == "image/jpeg", "%s: Small is %s" % (ext, response.headers))

print(json.dumps({"ok": True, "photos": {ext: object_id for ext, (object_id, _) in ready.items()}}))
