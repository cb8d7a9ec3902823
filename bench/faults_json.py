#!/usr/bin/env python3
"""The Parse JavaScript SDK's file upload for the fault harnesses (bench/faults.py --json-every, faults.sh jsondisk).

The SDK (`ParseFile.saveBase64`, `RESTController.request`) sends `POST /parse/files/<name>` with no X-Parse
header, `Content-Type: text/plain;charset=UTF-8` and the file as base64 in a JSON body that carries the keys
(`UploadJSONFileTests.sdkBody`); the server answers as a raw upload does. Past the server's JSON upload slots
it answers 503 with Retry-After, which the SDK retries (it retries a 5xx a few times with its own back-off):
`upload` sends a 503 with Retry-After again after that many seconds, up to 60 times.

  disk --port P --photo F --acked A --count N   N JSON uploads of unique copies of F, one after another, as
                                                the disk fills: statuses, the first 507's message; every
                                                attempt appended to A (faults.py verify checks the 201s)
"""
import argparse, base64, hashlib, http.client, json, os, sys, time

APP_ID = os.environ.get("GALLERYD_APP_ID", "gallery")


def sdk_body(data, mime):
    """The SDK's JSON body for `data` with the master key (the harnesses' caller); keys after the data."""
    return json.dumps({
        "base64": base64.b64encode(data).decode(), "fileData": {"metadata": {}, "tags": {}}, "_ContentType": mime,
        "_ApplicationId": APP_ID, "_MasterKey": os.environ.get("GALLERYD_MASTER_KEY", ""),
        "_ClientVersion": "js5.3.0", "_InstallationId": "0d7e4a3c-5b1f-4c2e-9a8d-3f6b2c1e0a97"}).encode()


def upload(port, name, data, mime, timeout=120, busy_tries=60):
    """One SDK upload: (status, body bytes, how many 503s with Retry-After it was sent again after)."""
    body = sdk_body(data, mime)
    for busy in range(busy_tries):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            connection.request("POST", f"/parse/files/{name}", body=body,
                               headers={"Content-Type": "text/plain;charset=UTF-8"})
            response = connection.getresponse()
            status, answer, wait = response.status, response.read(), response.getheader("Retry-After")
        finally:
            connection.close()
        if status != 503 or wait is None:
            return status, answer, busy
        time.sleep(float(wait))
    return status, answer, busy_tries


def cmd_disk(a):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    faults = __import__("faults")  # (faults.py imports this file)
    base = open(a.photo, "rb").read()
    ext, mime = faults.extension(base), faults.content_type(base)
    statuses, first_507, busy = {}, None, 0
    with open(a.acked, "a") as f:
        for i in range(a.count):
            tag = f"{a.tag}-{i}-{time.time_ns()}"
            data = faults.unique_photo(base, tag)
            entry = {"tag": tag, "sha256": hashlib.sha256(data).hexdigest(), "name": None, "photo": None,
                     "wants_photo": False, "json": True}
            status, answer, retried = upload(a.port, f"d{i}.{ext}", data, mime)
            busy += retried
            statuses[status] = statuses.get(status, 0) + 1
            if status == 201:
                entry["name"] = json.loads(answer)["name"]
            elif status == 507 and first_507 is None:
                first_507 = f"upload {i + 1}: {answer.decode(errors='replace')[:200]}"
            f.write(json.dumps(entry) + "\n")
    print(f"JSON uploads: {a.count} of {len(base) // 1024} KiB ({len(sdk_body(base, mime)) // 1024} KiB bodies): "
          f"statuses {json.dumps({str(k): v for k, v in sorted(statuses.items())})}, sent again after 503: {busy}")
    print(f"first 507: {first_507 or 'none'}")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("disk")
    d.add_argument("--port", type=int, required=True)
    d.add_argument("--photo", required=True)
    d.add_argument("--acked", required=True)
    d.add_argument("--count", type=int, default=20)
    d.add_argument("--tag", default="disk")
    a = p.parse_args()
    sys.exit({"disk": cmd_disk}[a.command](a) or 0)


if __name__ == "__main__":
    main()
