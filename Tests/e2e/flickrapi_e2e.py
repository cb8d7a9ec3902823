"""flickrapi (PyPI) against a galleryd test server: JSON and XML, a search, a photo's sizes, and
Flickr's errors raised as FlickrError with their codes. flickrapi posts form-encoded, OAuth-signed
calls (oauth_consumer_key is the app id; galleryd does not check the signature).

Usage: flickrapi_e2e.py BASE_URL APP_ID PHOTO_ID — prints {"ok": true, …} and exits 0 on success.
"""
import json
import sys
import urllib.request

import flickrapi
from flickrapi.exceptions import FlickrError

base, app_id, photo_id = sys.argv[1:4]
flickrapi.FlickrAPI.REST_URL = base + "/services/rest/"


def client(key, format):
    return flickrapi.FlickrAPI(key, "not-checked-secret", format=format, cache=False, store_token=False)


def expect(condition, message):
    if not condition:
        print(json.dumps({"ok": False, "failed": message}))
        sys.exit(1)


# JSON (flickrapi's parsed-json: format=json&nojsoncallback=1).
flickr = client(app_id, "parsed-json")
found = flickr.photos.search(text="beach", extras="url_s,url_m,date_upload", per_page=10)
expect(found["stat"] == "ok", found)
photos = found["photos"]["photo"]
expect([p["id"] for p in photos] == [photo_id], found)
expect(isinstance(found["photos"]["total"], int) and found["photos"]["total"] == 1, found)
expect(photos[0]["width_s"] == 240 and photos[0]["height_s"] == 180, photos[0])
with urllib.request.urlopen(photos[0]["url_s"].replace("_m", "_t")) as response:
    expect(response.status == 200 and response.headers["Content-Type"] == "image/jpeg", "thumbnail fetch")
echo = flickr.test.echo(greeting="hello")
expect(echo["greeting"]["_content"] == "hello", echo)

# XML (flickrapi's default etree: format=rest).
tree = client(app_id, "etree")
sizes = tree.photos.getSizes(photo_id=photo_id)
labels = [size.get("label") for size in sizes.find("sizes").findall("size")]
expect(labels[0] == "Square" and labels[-1] == "Original" and len(labels) == 13, labels)
small = [s for s in sizes.find("sizes").findall("size") if s.get("label") == "Small"][0]
expect(small.get("width") == "240" and small.get("height") == "180", small.attrib)
info = tree.photos.getInfo(photo_id=photo_id)
expect(info.find("photo").find("title").text == "Sunset at the beach", "getInfo title")
search = tree.photos.search(tags="sea")
expect(search.find("photos").get("total") == "1", "XML search total")

# Errors, both formats.
for format in ("parsed-json", "etree"):
    try:
        client(app_id, format).photos.getInfo(photo_id="NoSuchPhoto1")
        expect(False, "getInfo of a missing photo did not raise")
    except FlickrError as error:
        expect(error.code == 1, "%s: %r" % (format, error))
    try:
        client("wrong-key", format).test.echo()
        expect(False, "a wrong key did not raise")
    except FlickrError as error:
        expect(error.code == 100, "%s: %r" % (format, error))
    try:
        client(app_id, format).do_flickr_call("flickr.photos.frobnicate")
        expect(False, "an unknown method did not raise")
    except FlickrError as error:
        expect(error.code == 112, "%s: %r" % (format, error))

print(json.dumps({"ok": True, "photos": len(photos), "sizes": len(labels)}))
