"""flickrapi (PyPI) against a galleryd test server with `flickr_api_secret` set: its OAuth 1.0a
HMAC-SHA1 signatures (header-signed form POSTs) are checked. The right secret answers, JSON and
XML; a wrong one is Flickr's 96, "Invalid signature".

Usage: flickrapi_oauth_e2e.py BASE_URL APP_ID SECRET PHOTO_ID — prints {"ok": true} and exits 0.
"""
import json
import sys

import flickrapi
from flickrapi.exceptions import FlickrError

base, app_id, secret, photo_id = sys.argv[1:5]
flickrapi.FlickrAPI.REST_URL = base + "/services/rest/"


def client(consumer_secret, format):
    return flickrapi.FlickrAPI(app_id, consumer_secret, format=format, cache=False, store_token=False)


def expect(condition, message):
    if not condition:
        print(json.dumps({"ok": False, "failed": str(message)}))
        sys.exit(1)


found = client(secret, "parsed-json").photos.search(text="beach sunset", extras="url_s", per_page=5)
expect(found["stat"] == "ok" and [p["id"] for p in found["photos"]["photo"]] == [photo_id], found)
# Arguments that need percent-encoding in the base string.
echo = client(secret, "parsed-json").test.echo(greeting="héllo wörld & more=yes~*")
expect(echo["greeting"]["_content"] == "héllo wörld & more=yes~*", echo)
sizes = client(secret, "etree").photos.getSizes(photo_id=photo_id)
expect(len(sizes.find("sizes").findall("size")) == 13, "XML getSizes")
for format in ("parsed-json", "etree"):
    try:
        client("not-the-secret", format).photos.search(text="beach")
        expect(False, "a wrong secret did not raise")
    except FlickrError as error:
        expect(error.code == 96, "%s: %r" % (format, error))

print(json.dumps({"ok": True}))
