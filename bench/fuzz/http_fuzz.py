#!/usr/bin/env python3
"""Hostile-input fuzzer for a running galleryd, loopback only.

Sends what a network can send -- malformed request lines and headers, framing tricks
(Content-Length / Transfer-Encoding / chunk sizes), pipelined mixes, half-closed and reset
sockets, slowloris clients, connection floods, Parse API abuse, bucket traversal and Range
garbage, hostile uploads -- and checks after every batch that the server

  * is alive (GET /health answers 200 quickly),
  * answered client mistakes with a status below 500, in the route's format
    (Parse JSON under /parse, S3 XML under /bucket, plain text elsewhere),
  * neither hung nor left connections open (every socket it owns is closed again),
  * has its open file descriptors and the temporary files under <storage>/.tmp back at baseline;
    the descriptors the bucket's open-file cache keeps of blobs that still exist are allowed, up to
    --open-file-cache (one of a deleted or replaced file, or anything under .tmp, is a leak),
  * keeps its resident memory bounded (RSS after each round is reported; growth between
    identical rounds is flagged),
  * left the database as it was when every request of the batch was rejected
    (row counts and a digest of the rows that clients can change).

Each run is bounded by --time-limit (seconds) and per-group counts, deterministic for a --seed.
Findings are printed and written to --findings (JSON, with every input base64-encoded so it can
be replayed with --replay).

    python3 bench/fuzz/http_fuzz.py --port 18095 --storage-dir /tmp/fuzz-blobs \
        --database-url "$u" --master-key fuzzfuzzfuzzfuzz123 --server-log /tmp/fuzz-server.log

bench/fuzz/run.sh builds galleryd, starts a private PostgreSQL and the server, and runs this.
Exit status: 0 when nothing was found, 1 when there are findings, 2 on a usage error.
"""

import argparse
import base64
import json
import os
import random
import re
import socket
import stat
import struct
import subprocess
import sys
import time
import urllib.parse

# --------------------------------------------------------------------------------------------
# Fixtures: a tiny baseline and a tiny progressive JPEG (64x48), varied with a COM segment so
# every upload has a fresh checksum.

BASELINE_JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAoHBwgHBgoICAgLCgoLDhgQDg0NDh0VFhEYIx8lJCIfIiEmKzcvJik0KSEiMEExNDk7Pj4+JS5ESUM8SDc9Pjv/"
    "2wBDAQoLCw4NDhwQEBw7KCIoOzs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozv/wAARCAAwAEADASIAAhEBAxEB/8QAHwAA"
    "AQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRol"
    "JicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW"
    "19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdh"
    "cRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJma"
    "oqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDyWO2z2q1HaZ7Vcgts44rQgtM44rpwtD2x"
    "nSxNjOjss9qtR6fntWj5aRHbt3N6CpI4ZZO+0ei8V2To4WnLka5pdl09X/TPWoYmTKa6eqgFsAe9TrZwg4LD8OaupZRx43kD2qxHCP4Iifc1hNUouzhFPtrJ/crH"
    "s0MQ+5RW0hGMAt9BVmO0iP8Ayzf8hV5YHABYqn4damjgGch5Gz6VjL2SlZxS8rJfg22ezQxD7nL21tnHFaHlGKMbR8zdKltLbOOKtLb+ZOeOBwKeGrSp4VOHxS0X"
    "l3f9dT8YpV7y1KlvZDGSMCrCRsx2xjC+uOTVwwFn8tfujr7mrCw4/dxjnufSpdWNOPJDRLRtbt9l/X4Hs0K99WUkto4uCMt6CrKQPjJIjX2q2lsIsKqgv/Kp0tgr"
    "fNl39K5nVcFy7JdFsvJvdvyR7VGuVIrYdI48n1I4qwkJ4+cnnOEq2IDjD8n+4v8AWrCQkcH5fZetc0qqjotLfL8F+rb8j2aFc5u0gCruI4AzVi3t/LiL4zgcVZgg"
    "It2IHbFWltvljTA5OTRSrONKDW6jp6ydl+R+MUa+pUit/KiBA+Y8CrEVv5QCqvzkflVxYAZCT91Bipo4Co3Y+dzxxUSqqD93RLReS6tebeiPZoVypHbY/dxjnufS"
    "rEVuB8qYA7v/AIVbS2wNi/dA+Yj+VTpACASvy/wr61yyq28rfh5L9Xu3oj2qFcqx24C/KNi5xu7mrEdvtUYXYD09TVtLYjry3X2Wp0g/iGRnqe5+lYSq8r9P6+Xo"
    "vm29D2aFc//Z")

PROGRESSIVE_JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAoHBwgHBgoICAgLCgoLDhgQDg0NDh0VFhEYIx8lJCIfIiEmKzcvJik0KSEiMEExNDk7Pj4+JS5ESUM8SDc9Pjv/"
    "2wBDAQoLCw4NDhwQEBw7KCIoOzs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozv/wgARCAAwAEADASIAAhEBAxEB/8QAGAAB"
    "AQEBAQAAAAAAAAAAAAAAAwIEBQb/xAAZAQACAwEAAAAAAAAAAAAAAAADBAABAgb/2gAMAwEAAhADEAAAAfJK2gmcy6aM2NumHAR7w7y9FrOLFGSnRRrG6SKgnOai"
    "rOMFGunCRUE6SKg3f//EABwQAAMBAQADAQAAAAAAAAAAAAABAhESAxMhIv/aAAgBAQABBQJSKRQLxnrOEcoUoUikzBJs4SEjBImTMUwYcpGCkwmTnXhhzhyYYSiZ"
    "xKcSnBSKRSKRL88mfUjkw5MP/8QAGBEBAQEBAQAAAAAAAAAAAAAAAgADASH/2gAIAQMBAT8BOkNOw0hpF+wcHBwcHBwd/8QAHhEAAgIDAAMBAAAAAAAAAAAAAQIA"
    "EQMSMSFBsXH/2gAIAQIBAT8BxJvCmJTXTDqPQ+w63yY3K4vHTNgooTavELVFelH59hauQtC1T//EAB0QAAIBBAMAAAAAAAAAAAAAAAEgEQAQITEwQVH/2gAIAQEA"
    "Bj8CfTat2mLeVgJFQOGAof8A/8QAIRAAAgEDBQEBAQAAAAAAAAAAAAEhETFBEFFhcZGBILH/2gAIAQEAAT8h/AgkVxbou83TW6IUqzhOhXBshPmiOVtDAu9BM4sF"
    "2BP00Bc/NJBm6LCIrCUiocyzn4hfPRTVSQOwLBKdAwL0giFuUFahOFBBfJFGcsWCtkXGMIXr+CzP/9oADAMBAAIAAwAAABALJFzP5Q/L0kr/xAAaEQACAwEBAAAA"
    "AAAAAAAAAAAAAREhURAg/9oACAEDAQE/EIx4do7SexPb69vj/wD/xAAiEQEAAAQHAQEBAAAAAAAAAAABABEhYTFBUXGBofDBkbH/2gAIAQIBAT8QhThLBlu+YLSS"
    "dKr8JRJkQWkHSrBB0hbV9nDhGFFMV0PdQs5AyMCy4rYgaCkuOj6raGWYlG6kfyBeQKFjNLrQiTaXVj64rQia29xscq0j/8QAIRAAAgICAgIDAQAAAAAAAAAAAREA"
    "ITFBUWGBsXGR0fD/2gAIAQEAAT8QbqN1G6jNQACgHcAKIeLgSQPwEL/ER6qPVRvwAmyTikWOB1Abz2YGAS8OYFsOcR6qOJOCBTIQhhC5KzK0h8BF2SOiDww8kVDV"
    "c21L1UY1QoQnpGezEUXs8QagH1g8jjgNK5/pwwo+GUGwKAcYq0KisgWoRUWI+omi9niCGEDf5gBRcuRiBJOOTDggGlMJFlmBJE4VChS+qixqCw9QZAJ9hDjN5dRr"
    "MPJ2fif/2Q==")


def vary_jpeg(jpeg, tag):
    """The same image with a COM segment after SOI, so its checksum is new."""
    comment = ("fuzz " + tag).encode()[:60000]
    return jpeg[:2] + b"\xff\xfe" + struct.pack(">H", len(comment) + 2) + comment + jpeg[2:]


def find_marker(jpeg, marker):
    """Offset of the first segment with the given marker byte (after SOI), or -1."""
    i = 2
    while i + 4 <= len(jpeg):
        if jpeg[i] != 0xFF:
            return -1
        m = jpeg[i + 1]
        if m == marker:
            return i
        if m == 0xDA:
            return -1
        length = struct.unpack(">H", jpeg[i + 2:i + 4])[0]
        i += 2 + length
    return -1


def with_dimensions(jpeg, width, height):
    """The JPEG with its SOF0/SOF2 frame header claiming width x height."""
    out = bytearray(jpeg)
    for marker in (0xC0, 0xC2):
        at = find_marker(jpeg, marker)
        if at >= 0:
            out[at + 5:at + 9] = struct.pack(">HH", height & 0xFFFF, width & 0xFFFF)
            return bytes(out)
    return bytes(out)


def with_many_scans(jpeg, scans):
    """The progressive JPEG with one of its scans repeated `scans` times before EOI."""
    sos = jpeg.find(b"\xff\xda")
    nxt = jpeg.find(b"\xff\xda", sos + 2)
    if sos < 0 or nxt < 0:
        return jpeg
    scan = jpeg[nxt:jpeg.find(b"\xff\xda", nxt + 2)] if jpeg.find(b"\xff\xda", nxt + 2) > 0 else jpeg[nxt:-2]
    return jpeg[:-2] + scan * scans + b"\xff\xd9"


# --------------------------------------------------------------------------------------------
# Wire helpers


class Result:
    """What came back for one case."""

    def __init__(self):
        self.raw = b""
        self.responses = []  # (status, headers{lower: value}, body)
        self.closed = False  # the server closed (EOF or reset)
        self.reset = False
        self.timed_out = False
        self.error = None
        self.seconds = 0.0

    @property
    def statuses(self):
        return [r[0] for r in self.responses]

    def first(self):
        return self.responses[0] if self.responses else None


def parse_responses(buf, head_requests=0):
    """Splits a byte stream into responses; stops at the first incomplete one. 1xx are dropped."""
    out = []
    heads_left = head_requests
    pos = 0
    while pos < len(buf):
        end = buf.find(b"\r\n\r\n", pos)
        if end < 0:
            break
        head = buf[pos:end].decode("latin-1")
        lines = head.split("\r\n")
        m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
        if not m:
            out.append((-1, {"_line": lines[0]}, b""))
            break
        status = int(m.group(1))
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        pos = end + 4
        if 100 <= status < 200:
            continue
        bodyless = status in (204, 304) or heads_left > 0
        if heads_left > 0:
            heads_left -= 1
        if bodyless:
            out.append((status, headers, b""))
            continue
        if "content-length" in headers:
            try:
                n = int(headers["content-length"])
            except ValueError:
                out.append((-1, headers, b""))
                break
            if pos + n > len(buf):
                out.append((status, headers, buf[pos:]))
                pos = len(buf)
                break
            out.append((status, headers, buf[pos:pos + n]))
            pos += n
        else:
            out.append((status, headers, buf[pos:]))
            pos = len(buf)
    return out


class Target:
    def __init__(self, args):
        self.host = args.host
        self.port = args.port
        self.args = args

    def connect(self, timeout=5.0):
        s = socket.create_connection((self.host, self.port), timeout=timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def exchange(self, pieces, timeout=3.0, shut=True, delay=0.0, expect_responses=None, head_requests=0, rst=False):
        """Sends `pieces` (bytes or a list, with `delay` seconds between them), half-closes unless
        told otherwise, and reads until the server closes, `expect_responses` complete responses
        arrived (keep-open cases), or `timeout` passes without a byte."""
        r = Result()
        if isinstance(pieces, (bytes, bytearray)):
            pieces = [bytes(pieces)]
        start = time.monotonic()
        try:
            s = self.connect(timeout)
        except OSError as e:
            r.error = "connect: %s" % e
            return r
        try:
            for i, piece in enumerate(pieces):
                if i and delay:
                    time.sleep(delay)
                try:
                    s.sendall(piece)
                except (BrokenPipeError, ConnectionResetError):
                    break
            if rst:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
                r.closed = True
                r.seconds = time.monotonic() - start
                return r
            if shut:
                try:
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
            s.settimeout(timeout)
            while True:
                try:
                    chunk = s.recv(65536)
                except socket.timeout:
                    r.timed_out = True
                    break
                except ConnectionResetError:
                    r.closed = r.reset = True
                    break
                if not chunk:
                    r.closed = True
                    break
                r.raw += chunk
                if expect_responses is not None:
                    got = parse_responses(r.raw, head_requests)
                    complete = [x for x in got if x[0] == -1 or "content-length" not in x[1]
                                or len(x[2]) >= int(x[1].get("content-length", "0") or 0)]
                    if len(complete) >= expect_responses:
                        break
        finally:
            try:
                s.close()
            except OSError:
                pass
        r.responses = parse_responses(r.raw, head_requests)
        r.seconds = time.monotonic() - start
        return r


def request(method, target, headers=(), body=b"", version="HTTP/1.1", host=True, length=True):
    """A well-formed request as bytes; `headers` is a list of (name, value) (str or bytes)."""
    def b(x):
        return x if isinstance(x, bytes) else x.encode("utf-8", "surrogateescape")
    lines = [b(method) + b" " + b(target) + b" " + b(version)]
    if host:
        lines.append(b"Host: fuzz")
    names = {b(n).lower() for n, _ in headers}
    for n, v in headers:
        lines.append(b(n) + b": " + b(v))
    if length and body and b"content-length" not in names and b"transfer-encoding" not in names:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + b(body)


def chunked(body, sizes=None):
    out = b""
    i = 0
    sizes = sizes or [len(body)]
    for n in sizes:
        part = body[i:i + n]
        i += n
        if part:
            out += b"%x\r\n" % len(part) + part + b"\r\n"
    if i < len(body):
        out += b"%x\r\n" % (len(body) - i) + body[i:] + b"\r\n"
    return out + b"0\r\n\r\n"


def swift_percent_decode(path):
    """Mirrors Foundation's removingPercentEncoding: None for malformed escapes or invalid UTF-8."""
    out = bytearray()
    raw = path.encode("latin-1") if isinstance(path, str) else path
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == 0x25:
            h = raw[i + 1:i + 3]
            if len(h) < 2 or not all(chr(x) in "0123456789abcdefABCDEF" for x in h):
                return None
            out.append(int(h, 16))
            i += 3
        else:
            out.append(c)
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def expected_format(target):
    """The error format for a request-target: json, xml or text (None when unknown)."""
    if isinstance(target, bytes):
        try:
            target = target.decode("ascii")
        except UnicodeDecodeError:
            return "text"
    if target.lower().startswith(("http://", "https://")):
        rest = target.split("://", 1)[1]
        slash = rest.find("/")
        target = rest[slash:] if slash >= 0 else "/"
    if not target.startswith("/") or "#" in target:
        return "text"
    path = target.split("?", 1)[0]
    if "%" in path:
        # A path that does not decode is answered by the mount its raw text is under.
        path = swift_percent_decode(path) or path
    for prefix, fmt in (("/parse", "json"), ("/bucket", "xml")):
        if path == prefix or path.startswith(prefix + "/"):
            return fmt
    return "text"


def format_of(headers, body):
    ct = headers.get("content-type", "")
    if ct.startswith("application/json"):
        try:
            doc = json.loads(body.decode("utf-8"))
        except Exception:
            return "bad-json"
        if isinstance(doc, dict) and ("error" in doc):
            return "json"
        return "json-unshaped"
    if ct.startswith("application/xml"):
        return "xml" if body.startswith(b"<?xml") and b"<Error>" in body else "bad-xml"
    if ct.startswith("text/plain"):
        return "text"
    if not body:
        return "empty"
    return "other:" + ct


# --------------------------------------------------------------------------------------------
# Server observation


def find_pid(port):
    inodes = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(parts[9])
        except OSError:
            pass
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                link = os.readlink("/proc/%s/fd/%s" % (pid, fd))
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(pid)
        except OSError:
            continue
    return None


def tcp_inodes(port):
    """inode -> (state, is_listener) for TCP sockets whose local port is `port`."""
    out = {}
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if int(parts[1].rsplit(":", 1)[1], 16) == port:
                        out[parts[9]] = parts[3]
        except OSError:
            pass
    return out


class Observer:
    """fd, RSS, temp-file and database snapshots of the server process."""

    def __init__(self, args):
        self.args = args
        self.pid = args.pid or find_pid(args.port)
        self.tmp_dir = os.path.join(args.storage_dir, ".tmp") if args.storage_dir else None

    def fds(self):
        """(total, http client sockets, files, cached blobs) open in the server: files are the
        descriptors of paths that are not cached blobs (see classify_files), cached blobs the
        bucket's open-file cache holds (docs/operations.md, `open_file_cache`)."""
        if not self.pid:
            return None
        ours = tcp_inodes(self.args.port)
        total = http = 0
        try:
            names = os.listdir("/proc/%d/fd" % self.pid)
        except OSError:
            return None
        links = []
        for fd in names:
            try:
                link = os.readlink("/proc/%d/fd/%s" % (self.pid, fd))
            except OSError:
                continue
            total += 1
            if link.startswith("socket:["):
                state = ours.get(link[8:-1])
                if state is not None and state != "0A":
                    http += 1
            elif link.startswith("/"):
                links.append((fd, link))
        files, cached = self.classify_files(links)
        return total, http, len(files), len(cached)

    def classify_files(self, links):
        """Splits (fd, path) pairs into (files, cached). A cached blob is a regular file under the
        blob directory, outside .tmp, that is still the file at its path (same device and inode): the
        open-file cache keeps such descriptors by design, at most `open_file_cache` of them, and drops
        one when its blob is replaced or deleted (LocalBlobStore.put/delete invalidate). Everything else
        counts against the baseline: a descriptor of a deleted or replaced file (shown as "(deleted)", or
        another inode than the path's now), anything under .tmp beyond the spool locks, other paths."""
        root = os.path.realpath(self.args.storage_dir) + os.sep if self.args.storage_dir else None
        files, cached = [], []
        for fd, link in links:
            if root and link.startswith(root) and not link.startswith(root + ".tmp" + os.sep) \
                    and not link.endswith(" (deleted)"):
                try:
                    held = os.stat("/proc/%d/fd/%s" % (self.pid, fd))
                    now = os.stat(link)
                    if stat.S_ISREG(held.st_mode) and (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                        cached.append(link)
                        continue
                except OSError:
                    pass
            files.append(link)
        return files, cached

    def file_fds(self):
        """The non-cached file descriptors (see classify_files), for a finding's detail."""
        links = []
        try:
            for fd in os.listdir("/proc/%d/fd" % self.pid):
                try:
                    link = os.readlink("/proc/%d/fd/%s" % (self.pid, fd))
                except OSError:
                    continue
                if link.startswith("/") and not link.startswith("/dev/"):
                    links.append((fd, link))
        except OSError:
            pass
        return sorted(self.classify_files(links)[0])

    def rss_kb(self):
        if not self.pid:
            return None
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None

    def alive(self):
        return self.pid is None or os.path.exists("/proc/%d" % self.pid)

    def temp_files(self):
        if not self.tmp_dir:
            return []
        # Each process spools in .tmp/<host>-<pid>-<id>/ and keeps a .lock beside it.
        found = []
        for parent, _, names in os.walk(self.tmp_dir):
            found += [os.path.relpath(os.path.join(parent, n), self.tmp_dir) for n in names if not n.endswith(".lock")]
        return sorted(found)

    def db_state(self):
        """Row counts and a digest of client-changeable columns, or None without a database URL."""
        if not self.args.database_url:
            return None
        sql = (
            "select 'photos', count(*), md5(coalesce(string_agg(object_id||title||array_to_string(tags,',')||"
            "coalesce(deleted_at::text,'-'), '|' order by object_id),'')) from photos union all "
            "select 'files', count(*), md5(coalesce(string_agg(name, '|' order by name),'')) from files union all "
            "select 'galleries', count(*), md5(coalesce(string_agg(object_id||name||coalesce(deleted_at::text,'-')||"
            "updated_at::text, '|' order by object_id),'')) from galleries union all "
            "select 'gallery_items', count(*), md5(coalesce(string_agg(object_id||gallery_id||photo_id||position, '|' "
            "order by object_id),'')) from gallery_items union all "
            "select 'jobs', count(*), '' from jobs")
        try:
            out = subprocess.run(["psql", "-XAtq", "-F", " ", self.args.database_url, "-c", sql],
                                 capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if out.returncode != 0:
            return None
        return dict((p[0], (int(p[1]), p[2] if len(p) > 2 else "")) for p in
                    (line.split(" ") for line in out.stdout.strip().splitlines()))


# --------------------------------------------------------------------------------------------
# The fuzzer


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.t = Target(args)
        self.obs = Observer(args)
        self.findings = []
        self.cases = 0
        self.deadline = time.monotonic() + args.time_limit
        self.batch_mutated = False
        self.app = [("X-Parse-Application-Id", args.app_id)]
        self.master = self.app + [("X-Parse-Master-Key", args.master_key)] if args.master_key else self.app
        self.photo_ids = []
        self.gallery_ids = []
        self.item_ids = []
        self.file_names = []
        self.blob_keys = []
        self.log_offset = 0
        self.rss_history = []
        self.fd_baseline = None
        self.tmp_baseline = None
        self.group_stats = {}
        self.records = []
        self.expected_warnings = 0
        if args.server_log and os.path.exists(args.server_log):
            self.log_offset = os.path.getsize(args.server_log)

    # ---- bookkeeping

    def out_of_time(self):
        return time.monotonic() > self.deadline

    def finding(self, group, kind, name, data, detail):
        key = (group, kind, name)
        if any((f["group"], f["kind"], f["case"]) == key for f in self.findings):
            return
        if isinstance(data, list):
            data = b"".join(data)
        self.findings.append({
            "group": group, "kind": kind, "case": name, "detail": detail,
            "input": base64.b64encode(data[:200000]).decode(), "preview": repr(data[:300]),
            "norm": base64.b64encode(self.placeholders(data[:200000])).decode(),
        })
        print("  FINDING [%s] %s: %s -- %s" % (group, kind, name, detail), flush=True)

    def check(self, group, name, data, r, *, allow=None, must_respond=True, fmt=None, allow_silent_close=False,
              allowed_5xx=(), mutating=False, code=None):
        """Judges one exchange. allow: statuses that are fine (default: anything < 500); code: the
        Parse error code a 4xx answer must carry."""
        self.cases += 1
        self.group_stats[group] = self.group_stats.get(group, 0) + 1
        if self.args.record:
            self.record(group, name, data, r)
        if r.error:
            self.finding(group, "connect-failed", name, data, r.error)
            return
        if r.timed_out and not r.closed:
            self.finding(group, "hang", name, data,
                         "no close within %.1fs; got %s" % (self.args.case_timeout, r.statuses or "nothing"))
        if not r.responses:
            if must_respond and not allow_silent_close:
                self.finding(group, "no-response", name, data, "connection %s without a response" %
                             ("reset" if r.reset else "closed" if r.closed else "open"))
            return
        for status, headers, body in r.responses:
            if status == -1:
                self.finding(group, "malformed-response", name, data, repr(headers.get("_line", ""))[:200])
                continue
            if status >= 500 and status not in allowed_5xx:
                self.finding(group, "5xx", name, data, "status %d body %r" % (status, body[:200]))
            elif allow is not None and status not in allow:
                self.finding(group, "unexpected-status", name, data,
                             "status %d (expected %s) body %r" % (status, sorted(allow), body[:200]))
            if mutating and 200 <= status < 300:
                self.batch_mutated = True
        if code is not None and r.responses[0][0] >= 400:
            try:
                got_code = json.loads(r.responses[0][2]).get("code")
            except (ValueError, AttributeError):
                got_code = None
            if got_code != code:
                self.finding(group, "wrong-error-code", name, data, "status %d: expected code %d, body %r" % (
                    r.responses[0][0], code, r.responses[0][2][:200]))
        if fmt is not None:
            status, headers, body = r.responses[0]
            if status >= 400:
                got = format_of(headers, body)
                if got != fmt:
                    self.finding(group, "wrong-error-format", name, data,
                                 "status %d: expected %s, got %s (%s) %r" % (status, fmt, got,
                                                                             headers.get("content-type"), body[:120]))

    def record(self, group, name, data, r):
        """One line per case for --record: what the server answered, to diff two binaries' runs of one
        seed (bench/fuzz/README.md, "Two binaries, one seed")."""
        answers = []
        for status, headers, body in r.responses:
            code = None
            if "json" in headers.get("content-type", "") and status >= 400:
                try:
                    code = json.loads(body).get("code")
                except (ValueError, AttributeError):
                    code = "unparsable"
            answers.append([status, code])
        end = "error" if r.error else "hang" if r.timed_out and not r.closed else "reset" if r.reset else \
            "closed" if r.closed else "open"
        if isinstance(data, list):
            data = b"".join(data)
        self.records.append({"group": group, "case": name, "answers": answers, "end": end,
                             "input": base64.b64encode(data[:20000]).decode(),
                             "norm": base64.b64encode(self.placeholders(data[:20000])).decode()})

    def run_values(self):
        """This run's own session token and seed ids, by placeholder."""
        values = {b"<token>": token.encode() for k, token in self.app if k == "X-Parse-Session-Token"}
        for role, ids in (("photo", self.photo_ids), ("gallery", self.gallery_ids), ("item", self.item_ids)):
            values.update({("<%s%d>" % (role, i)).encode(): oid.encode() for i, oid in enumerate(ids)})
        return values

    def placeholders(self, data):
        """The input with this run's session token and seed ids replaced by placeholders: --diff tells
        the same input from a mutation that made the token another well-formed one, and --replay puts
        its own run's values back."""
        for placeholder, value in self.run_values().items():
            data = data.replace(value, placeholder)
        return data

    def fill_in(self, data):
        values = self.run_values()
        return re.sub(rb"<(?:token|photo\d+|gallery\d+|item\d+)>", lambda m: values.get(m.group(0), m.group(0)), data)

    def health(self):
        start = time.monotonic()
        r = self.t.exchange(request("GET", "/health"), timeout=5, expect_responses=1)
        return r.first() is not None and r.first()[0] == 200, time.monotonic() - start

    def snapshot(self):
        return {"fds": self.obs.fds(), "tmp": self.obs.temp_files(), "rss": self.obs.rss_kb(), "db": self.obs.db_state()}

    def settle(self, label, before):
        """After a batch: alive, fds and temp files back to baseline, DB unchanged unless something succeeded."""
        ok, seconds = self.health()
        if not self.obs.alive():
            self.finding(label, "crash", "server process gone", b"", "pid %s exited" % self.obs.pid)
            raise SystemExit(self.report())
        if not ok:
            self.finding(label, "dead", "health after batch", b"", "GET /health failed")
        elif seconds > 2:
            self.finding(label, "slow-health", "health after batch", b"", "GET /health took %.1fs" % seconds)
        # Give the server a moment to close its side of the connections and delete files.
        deadline = time.monotonic() + self.args.settle_seconds
        while True:
            fds = self.obs.fds()
            tmp = self.obs.temp_files()
            good = (fds is None or (fds[1] <= 1 and fds[2] <= self.fd_baseline[2]
                                    and fds[3] <= self.args.open_file_cache)) and len(tmp) <= len(self.tmp_baseline)
            if good or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if fds is not None:
            if fds[1] > 1:
                self.finding(label, "fd-leak", "http sockets after batch", b"",
                             "%d client sockets still open (baseline 0)" % fds[1])
            if fds[2] > self.fd_baseline[2]:
                self.finding(label, "fd-leak", "file descriptors after batch", b"",
                             "%d files open besides %d cached blobs (baseline %d): %s" % (
                                 fds[2], fds[3], self.fd_baseline[2], self.obs.file_fds()[:10]))
            if fds[3] > self.args.open_file_cache:
                self.finding(label, "fd-growth", "cached blobs past open_file_cache", b"",
                             "%d blob descriptors open (open_file_cache %d)" % (fds[3], self.args.open_file_cache))
            # The cache's descriptors are judged against its own bound above, the rest against the baseline.
            if fds[0] - fds[3] > self.fd_baseline[0] - self.fd_baseline[3] + self.args.pool_slack:
                self.finding(label, "fd-growth", "total fds after batch", b"",
                             "%d open besides %d cached blobs (baseline %d besides %d)" % (
                                 fds[0] - fds[3], fds[3], self.fd_baseline[0] - self.fd_baseline[3], self.fd_baseline[3]))
        new_tmp = [t for t in tmp if t not in self.tmp_baseline]
        if new_tmp:
            self.finding(label, "temp-leak", "temp files after batch", b"", "%d left: %s" % (len(new_tmp), new_tmp[:5]))
        after = self.obs.db_state()
        if before.get("db") and after and not self.batch_mutated:
            for table, (count, digest) in before["db"].items():
                if table == "jobs":
                    continue
                now = after.get(table)
                if now and (now[0] != count or now[1] != digest):
                    self.finding(label, "data-changed", "rows of %s" % table, b"",
                                 "%s: %d -> %d rows (digest %s)" % (table, count, now[0],
                                                                   "same" if now[1] == digest else "changed"))
        self.scan_log(label)
        rss = self.obs.rss_kb()
        fd_text = "fds %s" % (fds,) if fds else ""
        print("  after %-12s cases=%-6d rss=%s MiB %s tmp=%d" % (
            label, self.cases, "%.1f" % (rss / 1024) if rss else "?", fd_text, len(tmp)), flush=True)
        self.batch_mutated = False

    def scan_log(self, label):
        """Server log lines at warning level or above written during the batch."""
        path = self.args.server_log
        if not path or not os.path.exists(path):
            return
        with open(path, "rb") as f:
            f.seek(self.log_offset)
            data = f.read()
            self.log_offset = f.tell()
        for line in data.decode("utf-8", "replace").splitlines():
            m = re.match(r"^\S+ (warning|error|critical) ", line)
            if not m:
                continue
            text = line.split(" ", 2)[2]
            # Expected at warning: the 503 for connections past maxConnections, and the workers
            # failing on the corrupt JPEGs the uploads group made into photos.
            if "maxConnections" in text or "processing failed" in text:
                self.expected_warnings += 1
                continue
            self.finding(label, "log-" + m.group(1), re.sub(r"[0-9a-f]{6,}|\d+", "N", text)[:160], b"", text[:400])

    def batch(self, label, fn):
        if self.out_of_time():
            print("  (time limit reached, skipping %s)" % label)
            return
        before = self.snapshot()
        t0 = time.monotonic()
        try:
            fn()
        except SystemExit:
            raise
        except Exception as e:  # a fuzzer bug must not hide what was found so far
            import traceback
            traceback.print_exc()
            self.finding(label, "fuzzer-error", type(e).__name__, b"", str(e)[:300])
        print("%-14s %.1fs" % (label, time.monotonic() - t0), flush=True)
        self.settle(label, before)

    # ---- setup

    def sign_in(self):
        """A user of the fuzzer's own: the app id alone uploads and writes nothing (docs/operations.md,
        "Upgrading to accounts"), so the attacks that need a writer carry this user's session, as a
        phone app's requests do. Requests with the app id alone are still sent where they are the attack."""
        name = "fuzz-%d-%d" % (self.args.seed, os.getpid())
        r = self.api("POST", "/parse/users", {"username": name, "password": "fuzz-%d" % self.rng.getrandbits(64)})
        if not r.responses or r.responses[0][0] not in (200, 201):
            raise SystemExit("seeding failed: sign-up answered %s %r" % (r.statuses, r.raw[:300]))
        token = json.loads(r.responses[0][2])["sessionToken"]
        self.app = self.app + [("X-Parse-Session-Token", token)]

    def seed_data(self):
        """Real objects for the attacks to aim at: two photos, a gallery with an item, all owned by the
        fuzzer's user so that its session reads and changes them (rows the master key creates have no
        owner and are seen only with the master key: docs/operations.md, "Upgrading to accounts")."""
        for i, jpeg in enumerate((BASELINE_JPEG, PROGRESSIVE_JPEG)):
            body = vary_jpeg(jpeg, "seed %d %d" % (self.args.seed, i))
            r = self.t.exchange(request("POST", "/parse/files/seed%d.jpg" % i,
                                        self.app + [("Content-Type", "image/jpeg")], body), timeout=10)
            if not r.responses or r.responses[0][0] not in (200, 201):
                raise SystemExit("seeding failed: upload answered %s %r" % (r.statuses, r.raw[:300]))
            doc = json.loads(r.responses[0][2])
            self.file_names.append(doc["name"])
            self.blob_keys.append(doc["url"].split("/bucket/", 1)[1])
            r = self.api("POST", "/parse/classes/Photo", {"original": {"__type": "File", "name": doc["name"]}},
                         headers=self.app)
            self.photo_ids.append(self.created_id(r))
        r = self.api("POST", "/parse/classes/Gallery", {"name": "fuzz gallery"}, headers=self.app)
        self.gallery_ids.append(self.created_id(r))
        r = self.api("POST", "/parse/classes/GalleryItem", {
            "gallery": {"__type": "Pointer", "className": "Gallery", "objectId": self.gallery_ids[0]},
            "photo": {"__type": "Pointer", "className": "Photo", "objectId": self.photo_ids[0]}}, headers=self.app)
        self.item_ids.append(self.created_id(r))
        # Wait (briefly) for thumbnails so the bucket has derivatives too.
        for _ in range(50):
            r = self.api("GET", "/parse/classes/Photo/" + self.photo_ids[0], headers=self.app)
            doc = json.loads(r.responses[0][2])
            if doc.get("status") in ("ready", "failed"):
                if "thumbnail" in doc:
                    self.blob_keys.append(doc["thumbnail"]["url"].split("/bucket/", 1)[1])
                break
            time.sleep(0.2)

    @staticmethod
    def created_id(r):
        if r.responses[0][0] not in (200, 201):
            raise SystemExit("seeding failed: %s %r" % (r.statuses, r.raw[:300]))
        return json.loads(r.responses[0][2])["objectId"]

    def api(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else b""
        hs = (headers if headers is not None else self.master) + ([("Content-Type", "application/json")] if data else [])
        r = self.t.exchange(request(method, path, hs, data), timeout=10)
        if not r.responses:
            raise SystemExit("seeding failed: %s %s got nothing" % (method, path))
        return r

    @staticmethod
    def header_lines(headers):
        return b"".join(("%s: %s\r\n" % (k, v)).encode() for k, v in headers)

    # ---- groups

    def run(self):
        if self.t.host not in ("127.0.0.1", "::1", "localhost"):
            raise SystemExit("refusing to fuzz a non-loopback host")
        ok, _ = self.health()
        if not ok:
            raise SystemExit("galleryd is not answering GET /health on %s:%d" % (self.t.host, self.t.port))
        print("galleryd pid %s, seed %d, time limit %ds" % (self.obs.pid, self.args.seed, self.args.time_limit))
        self.sign_in()
        self.seed_data()
        # Warm the database pool so its connections count in the fd baseline.
        for _ in range(3):
            self.api("GET", "/parse/classes/Photo?count=1")
        self.fd_baseline = self.obs.fds() or (0, 0, 0, 0)
        self.tmp_baseline = self.obs.temp_files()
        print("baseline: fds %s rss %s KiB tmp %d" % (self.fd_baseline, self.obs.rss_kb(), len(self.tmp_baseline)))
        groups = [
            ("request-line", self.g_request_line),
            ("headers", self.g_headers),
            ("framing", self.g_framing),
            ("app-id-only", self.g_app_id_only),
            ("chunked", self.g_chunked),
            ("pipelining", self.g_pipelining),
            ("mutation", self.g_mutation),
            ("concurrent", self.g_concurrent),
            ("parse-query", self.g_parse_query),
            ("parse-write", self.g_parse_write),
            ("parse-batch", self.g_parse_batch),
            ("bucket", self.g_bucket),
            ("uploads", self.g_uploads),
            ("sockets", self.g_sockets),
            ("slowloris", self.g_slowloris),
            ("flood", self.g_flood),
        ]
        wanted = set(self.args.groups.split(",")) if self.args.groups else None
        for round_number in range(self.args.rounds):
            print("== round %d" % (round_number + 1))
            for label, fn in groups:
                if wanted and label not in wanted:
                    continue
                if label in ("slowloris", "flood", "uploads-large") and round_number > 0:
                    continue
                self.batch(label, fn)
            self.rss_history.append(self.obs.rss_kb())
        if len(self.rss_history) >= 3 and all(self.rss_history):
            # Memory may grow in round 1 (caches, pools, arenas); later identical rounds must not keep growing.
            growth = self.rss_history[-1] - self.rss_history[1]
            if growth > self.args.rss_growth_kb:
                self.finding("rss", "rss-growth", "rounds", b"",
                             "RSS after rounds: %s KiB (grew %d KiB after round 2)" % (self.rss_history, growth))
        return self.report()

    # HTTP request line
    def g_request_line(self):
        T = self.t
        ok_get = request("GET", "/health")
        cases = [
            ("valid", ok_get, {200}, "text"),
            ("no host 1.1", request("GET", "/health", host=False), {400}, "text"),
            ("http/1.0 no host", request("GET", "/health", version="HTTP/1.0", host=False), {200}, None),
            ("lowercase method", request("get", "/health"), {404, 405, 400, 501}, "text"),
            ("CONNECT", b"CONNECT fuzz:443 HTTP/1.1\r\nHost: fuzz:443\r\n\r\n", None, "text"),
            ("TRACE", request("TRACE", "/health"), {405, 404, 501}, "text"),
            ("TRACE parse", request("TRACE", "/parse/classes/Photo"), {405, 404, 501}, "json"),
            ("OPTIONS *", request("OPTIONS", "*"), None, "text"),
            ("OPTIONS bucket", request("OPTIONS", "/bucket/x"), None, None),
            ("h2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", None, "text"),
            ("http 0.9", b"GET /health\r\n", {400}, "text"),
            ("http 0.9 bare", b"GET /\r\n\r\n", {400}, "text"),
            ("HTTP/2.0", request("GET", "/health", version="HTTP/2.0"), {505, 400}, "text"),
            ("HTTP/1.2", request("GET", "/health", version="HTTP/1.2"), {505, 400}, "text"),
            ("HTTP/9.9", request("GET", "/health", version="HTTP/9.9"), {505, 400}, "text"),
            ("HTTP/10.0", request("GET", "/health", version="HTTP/10.0"), {505, 400}, "text"),
            ("http/1.1 lower", request("GET", "/health", version="http/1.1"), {400}, "text"),
            ("HTTP/1.1 trailing space", b"GET /health HTTP/1.1 \r\nHost: x\r\n\r\n", {400}, "text"),
            ("double space", b"GET  /health HTTP/1.1\r\nHost: x\r\n\r\n", {400}, "text"),
            ("tab separator", b"GET\t/health\tHTTP/1.1\r\nHost: x\r\n\r\n", {400}, "text"),
            ("no version", b"GET /health\r\nHost: x\r\n\r\n", {400}, "text"),
            ("only method", b"GET\r\n\r\n", {400}, "text"),
            ("empty line then request", b"\r\n\r\n" + ok_get, {200}, None),
            ("bare LF request", b"GET /health HTTP/1.1\nHost: x\n\n", {400}, "text"),
            ("CR only", b"GET /health HTTP/1.1\rHost: x\r\r", None, None),
            ("NUL in method", b"G\x00T /health HTTP/1.1\r\nHost: x\r\n\r\n", {400}, "text"),
            ("NUL in path", b"GET /hea\x00lth HTTP/1.1\r\nHost: x\r\n\r\n", {400}, "text"),
            ("%00 in path", request("GET", "/health%00"), {404, 400}, "text"),
            ("%00 in parse path", request("GET", "/parse/classes/Photo%00", self.app), {400, 404}, "json"),
            ("raw 0xff in path", b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n", {400}, "text"),
            ("raw utf8 in path", "GET /h\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n".encode(), {400}, "text"),
            ("%ff in path", request("GET", "/parse/%ff%fe", self.app), {400}, None),
            ("%c0%ae overlong", request("GET", "/bucket/%c0%ae%c0%ae/etc/passwd"), {400}, None),
            ("bad escape %zz", request("GET", "/health%zz"), {400}, "text"),
            ("lone %", request("GET", "/parse/classes/Photo%"), {400}, None),
            ("fragment", request("GET", "/health#frag"), {400}, "text"),
            ("absolute-form", request("GET", "http://fuzz/health"), {200}, None),
            ("absolute-form https", request("GET", "https://fuzz/health?x=1"), {200}, None),
            ("absolute-form no path", request("GET", "http://fuzz"), {404, 200}, None),
            ("absolute-form query only", request("GET", "http://fuzz?x"), {404, 200}, None),
            ("absolute-form empty", request("GET", "http://"), {400}, "text"),
            ("authority-form GET", request("GET", "fuzz:80"), {400}, "text"),
            ("scheme ftp", request("GET", "ftp://fuzz/health"), {400}, "text"),
            ("very long uri", request("GET", "/" + "a" * 9000), {414}, "text"),
            ("uri at limit", request("GET", "/" + "a" * (8192 - 17)), {404, 414}, "text"),
            ("long parse uri", request("GET", "/parse/classes/Photo?where=" + "a" * 9000, self.app), {414}, "json"),
            ("long bucket uri", request("GET", "/bucket/" + "a" * 9000), {414}, "xml"),
            ("huge method", request("A" * 10000, "/"), {414, 400}, None),
            ("method chars", request("G(T", "/health"), {400}, "text"),
            ("DEL in target", b"GET /he\x7flth HTTP/1.1\r\nHost: x\r\n\r\n", {400}, "text"),
            ("dot segments", request("GET", "/parse/../health"), None, None),
            ("many slashes", request("GET", "//////health"), None, None),
            ("query only target", request("GET", "?x=1"), {400}, "text"),
            ("empty target", b"GET  HTTP/1.1\r\nHost: x\r\n\r\n", {400}, "text"),
            ("random method", request("FUZZ", "/health"), {405, 404, 501}, "text"),
            ("HEAD health", request("HEAD", "/health"), {200}, None),
        ]
        for name, data, allow, fmt in cases:
            r = T.exchange(data, timeout=self.args.case_timeout, head_requests=1 if data.startswith(b"HEAD") else 0)
            self.check("request-line", name, data, r, allow=allow, fmt=fmt, allowed_5xx=(501, 505),
                       allow_silent_close=name in ("CR only",))
        for i in range(self.args.random_cases):
            n = self.rng.choice([1, 2, 10, 100, 1000, 5000, 20000])
            data = bytes(self.rng.getrandbits(8) for _ in range(n))
            r = T.exchange(data, timeout=self.args.case_timeout)
            self.check("request-line", "random bytes %d" % n, data, r, allow_silent_close=True, allowed_5xx=(501, 505))
            if self.out_of_time():
                return

    # HTTP headers
    def g_headers(self):
        T = self.t
        base = b"GET /health HTTP/1.1\r\nHost: x\r\n"
        cases = [
            ("no colon", base + b"NoColon\r\n\r\n", {400}),
            ("space before colon", base + b"Name : v\r\n\r\n", {400}),
            ("empty name", base + b": v\r\n\r\n", {400}),
            ("obs-fold", base + b"X: a\r\n  b\r\n\r\n", {400}),
            ("tab fold", base + b"X: a\r\n\tb\r\n\r\n", {400}),
            ("NUL in value", base + b"X: a\x00b\r\n\r\n", {400}),
            ("bare CR in value", base + b"X: a\rb\r\n\r\n", {400}),
            ("DEL in value", base + b"X: a\x7fb\r\n\r\n", {400}),
            ("non-utf8 value", base + b"X: \xff\xfe\xc0\xae\r\n\r\n", {200}),
            ("non-utf8 name", base + b"\xff: v\r\n\r\n", {400}),
            ("utf8 name", base + "N\u00e4me: v\r\n\r\n".encode(), {400}),
            ("bare LF header", base + b"X: a\n\r\n", {400}),
            ("duplicate host", base + b"Host: y\r\n\r\n", {400}),
            ("empty host", b"GET /health HTTP/1.1\r\nHost:\r\n\r\n", {200}),
            ("host garbage", b"GET /health HTTP/1.1\r\nHost: \x01\r\n\r\n", {400}),
            ("101 headers", base + b"".join(b"X-%d: v\r\n" % i for i in range(101)) + b"\r\n", {431}),
            ("100 headers", b"GET /health HTTP/1.1\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(99))
             + b"Host: x\r\n\r\n", {200}),
            ("10000 headers", base + b"X: v\r\n" * 10000 + b"\r\n", {431}),
            ("huge header", base + b"X: " + b"a" * 40000 + b"\r\n\r\n", {431}),
            ("header section at limit", base + b"X: " + b"a" * (32768 - 20) + b"\r\n\r\n", {200, 431}),
            ("many tiny headers", base + b"a:\r\n" * 99 + b"\r\n", {200, 431}),
            ("expect 100-continue no body", base + b"Expect: 100-continue\r\n\r\n", {200}),
            ("expect Continue case", base + b"Expect: 100-Continue\r\n\r\n", {200}),
            ("expect garbage", base + b"Expect: fuzz\r\n\r\n", {417}),
            ("expect list", base + b"Expect: 100-continue, fuzz\r\n\r\n", {417}),
            ("expect empty", base + b"Expect:\r\n\r\n", {200}),
            ("expect 1.0", b"GET /health HTTP/1.0\r\nExpect: 100-continue\r\n\r\n", {200}),
            ("connection garbage", base + b"Connection: \xff, , ,,close,,\r\n\r\n", {200}),
            ("connection upgrade h2c", base + b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
             b"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", {200}),
            ("upgrade websocket", base + b"Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n", {200}),
            ("accept-encoding garbage", base + b"Accept-Encoding: gzip;q=\xff, *;q=-1, br;q=1e999\r\n\r\n", {200}),
            ("accept-encoding huge q", base + b"Accept-Encoding: " + b"gzip;q=0.5," * 2000 + b"\r\n\r\n", {200}),
            ("app id non-utf8", b"GET /parse/classes/Photo HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: \xff\xfe\r\n\r\n",
             {403}),
            ("master key huge", b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + b"k" * 30000 + b"\r\n\r\n",
             {401}),
            ("authorization empty bearer", b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer\r\n\r\n", {401}),
        ]
        for name, data, allow in cases:
            r = T.exchange(data, timeout=self.args.case_timeout)
            target = data.split(b" ", 2)[1]
            self.check("headers", name, data, r, allow=allow, fmt=expected_format(target), allowed_5xx=(501, 505))
        # Headers that should be refused on every URL space, in its format.
        for target in ("/health", "/parse/classes/Photo", "/bucket/" + self.blob_keys[0], "/nowhere"):
            for name, extra, allow in [("obs-fold", b"X: a\r\n b\r\n", {400}), ("431", b"X: v\r\n" * 200, {431}),
                                       ("expect 417", b"Expect: nope\r\n", {417}), ("dup host", b"Host: y\r\n", {400})]:
                data = ("GET %s HTTP/1.1\r\nHost: x\r\n" % target).encode() + extra + b"\r\n"
                r = T.exchange(data, timeout=self.args.case_timeout)
                self.check("headers", "%s on %s" % (name, target.split("/")[1]), data, r, allow=allow,
                           fmt=expected_format(target))

    # Content-Length / Transfer-Encoding
    def g_framing(self):
        T = self.t
        # The fuzzer's session: framing is the attack here, so a well-framed body must create (201);
        # app_id_only() sends the app id alone, where the refusal is what is checked.
        post = b"POST /parse/classes/Gallery HTTP/1.1\r\nHost: x\r\n" + self.header_lines(self.app)
        body = b'{"name":"x"}'
        bad_cl = [b"-1", b"+12", b"0x10", b"1 2", b"12,13", b"1e3", b"", b" ", b"\xff", b"99999999999999999999",
                  b"18446744073709551616", b"9223372036854775807", b"9223372036854775808", b"00000000000000000012",
                  b"12a", b"1_2", b"\xd9\xa1\xd9\xa2"]
        for value in bad_cl:
            data = post + b"Content-Length: " + value + b"\r\n\r\n" + body
            r = T.exchange(data, timeout=self.args.case_timeout)
            allowed = {400, 413}
            self.check("framing", "content-length %r" % value, data, r, allow=allowed, fmt="json", mutating=True)
        cases = [
            ("duplicate CL equal", post + b"Content-Length: 12\r\nContent-Length: 12\r\n\r\n" + body, {400, 201}),
            ("duplicate CL differ", post + b"Content-Length: 12\r\nContent-Length: 13\r\n\r\n" + body, {400}),
            ("CL list equal", post + b"Content-Length: 12, 12\r\n\r\n" + body, {400, 201}),
            ("CL list differ", post + b"Content-Length: 12, 5\r\n\r\n" + body, {400}),
            ("CL too big for route", post + b"Content-Length: 10485760\r\n\r\n" + body, {413}),
            ("CL huge 18 digits", post + b"Content-Length: 999999999999999999\r\n\r\n" + body, {413}),
            ("CL shorter than body", post + b"Content-Length: 5\r\n\r\n" + body, {400}),
            ("CL longer than body", post + b"Content-Length: 50\r\n\r\n" + body, None),
            ("CL tab OWS", post + b"Content-Length: \t12\t\r\n\r\n" + body, {201}),
            ("CL+TE", post + b"Content-Length: 12\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(body), {400}),
            ("TE+CL", post + b"Transfer-Encoding: chunked\r\nContent-Length: 12\r\n\r\n" + chunked(body), {400}),
            ("TE chunked,chunked", post + b"Transfer-Encoding: chunked, chunked\r\n\r\n" + chunked(body), {400}),
            ("TE twice", post + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(body), {400}),
            ("TE gzip", post + b"Transfer-Encoding: gzip\r\n\r\n" + body, {501, 400}),
            ("TE gzip,chunked", post + b"Transfer-Encoding: gzip, chunked\r\n\r\n" + chunked(body), {501, 400}),
            ("TE identity", post + b"Transfer-Encoding: identity\r\n\r\n" + body, {501, 400}),
            ("TE chunked,identity", post + b"Transfer-Encoding: chunked, identity\r\n\r\n" + chunked(body), {501, 400}),
            ("TE xchunked", post + b"Transfer-Encoding: xchunked\r\n\r\n" + chunked(body), {501, 400}),
            ("TE chunked;q=1", post + b"Transfer-Encoding: chunked;q=1\r\n\r\n" + chunked(body), {400, 201, 501}),
            ("TE CHUNKED", post + b"Transfer-Encoding: CHUNKED\r\n\r\n" + chunked(body), {201}),
            ("TE empty", post + b"Transfer-Encoding:\r\n\r\n" + body, {400, 501}),
            ("TE comma", post + b"Transfer-Encoding: ,\r\n\r\n" + body, {400, 501}),
            ("TE chunked, (trailing comma)", post + b"Transfer-Encoding: chunked,\r\n\r\n" + chunked(body), {400, 201}),
            ("TE with 1.0", post.replace(b"HTTP/1.1", b"HTTP/1.0") + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(body),
             {400}),
            ("TE vertical tab", post + b"Transfer-Encoding:\x0bchunked\r\n\r\n" + chunked(body), {400}),
            ("TE space name", post + b"Transfer-Encoding : chunked\r\n\r\n" + chunked(body), {400}),
            ("body on GET", request("GET", "/health", body=b"hello"), {200}),
            ("body on GET parse", request("GET", "/parse/classes/Photo", self.app, body=b"{}"), {200}),
            ("chunked on GET", request("GET", "/health", [("Transfer-Encoding", "chunked")], chunked(b"abc")), {200}),
            ("body on HEAD", request("HEAD", "/health", body=b"hello"), {200}),
            ("body on DELETE", request("DELETE", "/parse/classes/Photo/zzzzzzzzzz", self.app, body=b"{}"), {404}),
            ("CL 0 POST", post + b"Content-Length: 0\r\n\r\n", {400}),
            ("no CL POST", post + b"\r\n", {400}),
            ("expect + CL too big", post + b"Expect: 100-continue\r\nContent-Length: 2000000\r\n\r\n", {413}),
            ("expect + body", post + b"Expect: 100-continue\r\nContent-Length: 12\r\n\r\n" + body, {201}),
        ]
        for name, data, allow in cases:
            r = T.exchange(data, timeout=self.args.case_timeout, head_requests=1 if data.startswith(b"HEAD") else 0)
            # An incomplete body followed by EOF is dropped without an answer (RFC 9112 §6.3: the
            # message is incomplete and the connection is closed).
            self.check("framing", name, data, r, allow=allow, fmt=expected_format(data.split(b" ", 2)[1]),
                       allowed_5xx=(501,), mutating=True, allow_silent_close=allow is None)
        # Expect: 100-continue, client waits for the 100 before sending.
        s = T.connect()
        s.sendall(post + b"Expect: 100-continue\r\nContent-Length: 12\r\nConnection: close\r\n\r\n")
        s.settimeout(self.args.case_timeout)
        try:
            first = s.recv(100)
            if not first.startswith(b"HTTP/1.1 100"):
                self.finding("framing", "no-100-continue", "expect waits", post, repr(first[:100]))
            s.sendall(body)
            rest = b""
            while True:
                c = s.recv(65536)
                if not c:
                    break
                rest += c
            self.batch_mutated = True
        except OSError as e:
            self.finding("framing", "expect-continue-error", "expect waits", post, str(e))
        finally:
            s.close()

    def g_app_id_only(self):
        """The app id alone is the attack: it creates nothing (400 code 119) and uploads nothing (400
        code 130, refused on the request's head, so a client announcing 50 MB gets its answer without
        sending a byte of it): docs/operations.md, "Upgrading to accounts", and the keys paragraph."""
        app = [("X-Parse-Application-Id", self.args.app_id)]
        body = b'{"name":"app id only"}'
        for name, data in [
            ("create", request("POST", "/parse/classes/Gallery", app + [("Content-Type", "application/json")], body)),
            ("create chunked", request("POST", "/parse/classes/Gallery", app + [("Transfer-Encoding", "chunked")],
                                       chunked(body, [3, 4]))),
            ("batch create", request("POST", "/parse/batch", app, json.dumps({"requests": [
                {"method": "POST", "path": "/parse/classes/Gallery", "body": {"name": "b"}}]}).encode())),
        ]:
            r = self.t.exchange(data, timeout=self.args.case_timeout)
            if name == "batch create":
                # A batch answers 200 with one result per request: the create inside must be refused.
                ok = r.first() and (r.first()[0] >= 400 or b'"success"' not in r.first()[2])
                self.check("app-id-only", "app id only " + name, data, r, fmt="json")
                if r.first() and not ok:
                    self.finding("app-id-only", "app-id-only-wrote", name, data, repr(r.first()[2][:200]))
                continue
            self.check("app-id-only", "app id only " + name, data, r, allow={400}, fmt="json", code=119)
        head = (b"POST /parse/files/big.jpg HTTP/1.1\r\nHost: x\r\n" + self.header_lines(app)
                + b"Content-Type: image/jpeg\r\nContent-Length: 50000000\r\n\r\n")
        r = self.t.exchange(head, timeout=self.args.case_timeout, shut=False, expect_responses=1)
        self.check("app-id-only", "app id only upload head", head, r, allow={400}, fmt="json", code=130)

    def g_chunked(self):
        T = self.t
        post = (b"POST /parse/classes/Gallery HTTP/1.1\r\nHost: x\r\n" + self.header_lines(self.app)
                + b"Transfer-Encoding: chunked\r\n\r\n")
        body = b'{"name":"c"}'
        bad = [
            ("size overflow", b"ffffffffffffffffff\r\n" + body + b"\r\n0\r\n\r\n", {400, 413}),
            ("size 16 f", b"ffffffffffffffff\r\n" + body + b"\r\n0\r\n\r\n", {400, 413}),
            ("size 15 f", b"fffffffffffffff\r\n" + body + b"\r\n0\r\n\r\n", {413}),
            ("leading zeros", b"000000000000000000000c\r\n" + body + b"\r\n0\r\n\r\n", {400, 201}),
            ("negative", b"-c\r\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("0x prefix", b"0xc\r\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("hex garbage", b"zz\r\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("empty size", b"\r\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("space before size", b" c\r\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("size then space", b"c \r\n" + body + b"\r\n0\r\n\r\n", {201, 400}),
            ("extension", b"c;name=value\r\n" + body + b"\r\n0;x\r\n\r\n", {201}),
            ("extension quoted", b'c;name="v;a\\"l"\r\n' + body + b"\r\n0\r\n\r\n", {201, 400}),
            ("extension NUL", b"c;na\x00me\r\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("extension huge", b"c;" + b"x" * 5000 + b"\r\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("extension bad start", b"c x\r\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("bare LF size", b"c\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("data too long", b"5\r\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("data too short", b"20\r\n" + body + b"\r\n0\r\n\r\n", {400}),
            ("no CRLF after data", b"c\r\n" + body + b"0\r\n\r\n", {400}),
            ("LF after data", b"c\r\n" + body + b"\n0\r\n\r\n", {400}),
            ("no last chunk", b"c\r\n" + body + b"\r\n", None),
            ("trailers", b"c\r\n" + body + b"\r\n0\r\nX-T: 1\r\nY: 2\r\n\r\n", {201}),
            ("trailer bad", b"c\r\n" + body + b"\r\n0\r\nBad Trailer\r\n\r\n", {400}),
            ("trailer NUL", b"c\r\n" + body + b"\r\n0\r\nX: \x00\r\n\r\n", {400}),
            ("trailers huge", b"c\r\n" + body + b"\r\n0\r\n" + b"X: " + b"v" * 40000 + b"\r\n\r\n", {431}),
            ("trailers many", b"c\r\n" + body + b"\r\n0\r\n" + b"X: v\r\n" * 200 + b"\r\n", {431}),
            ("trailer CL smuggle", b"c\r\n" + body + b"\r\n0\r\nContent-Length: 50\r\n\r\n", {201}),
            ("1-byte chunks", b"".join(b"1\r\n" + bytes([c]) + b"\r\n" for c in body) + b"0\r\n\r\n", {201}),
            ("many empty-ish", b"1\r\n{\r\n" + b"0;a\r\n" * 0 + b"b\r\n" + body[1:] + b"\r\n0\r\n\r\n", {201}),
            ("too large total", b"".join(b"10000\r\n" + b" " * 0x10000 + b"\r\n" for _ in range(20)) + b"0\r\n\r\n", {413}),
        ]
        for name, tail, allow in bad:
            data = post + tail
            r = T.exchange(data, timeout=self.args.case_timeout)
            self.check("chunked", name, data, r, allow=allow, fmt="json", mutating=True,
                       allow_silent_close=name in ("data too short", "no last chunk"))

    def g_pipelining(self):
        T = self.t
        ok = request("GET", "/health")
        n = 1000
        data = ok * n
        r = T.exchange(data, timeout=10)
        self.check("pipelining", "1000 pipelined", data, r, allow={200})
        if len(r.responses) != n:
            self.finding("pipelining", "lost-responses", "1000 pipelined", data[:200], "%d of %d" % (len(r.responses), n))
        mixes = [
            ("valid bad valid", ok + b"GET /x HTTP/1.1\r\n\r\n" + ok, [200, 400]),
            ("valid 413 valid", ok + request("POST", "/parse/classes/Gallery", self.app + [("Content-Length", "9999999")])
             + ok, [200, 413]),
            ("CL.TE smuggle", request("POST", "/parse/classes/Gallery", self.app + [("Content-Length", "4"), (
                "Transfer-Encoding", "chunked")], b"0\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", length=False), [400]),
            ("TE.CL smuggle", request("POST", "/parse/classes/Gallery", self.app + [("Transfer-Encoding", "chunked"), (
                "Content-Length", "3")], b"5\r\nGPOST\r\n0\r\n\r\n", length=False), [400]),
            ("head then get", request("HEAD", "/health") + ok, [200, 200]),
            ("404 405 200", request("GET", "/nope") + request("PATCH", "/health") + ok, [404, 405, 200]),
            ("options then get", request("OPTIONS", "/health") + ok, [204, 200]),
            ("parse err then get", request("GET", "/parse/classes/Nope", self.app) + ok, [400, 200]),
            ("bucket 404 then get", request("GET", "/bucket/originals/nope.jpg") + ok, [404, 200]),
            ("close mid pipeline", request("GET", "/health", [("Connection", "close")]) + ok, [200]),
        ]
        for name, data, expected in mixes:
            r = T.exchange(data, timeout=self.args.case_timeout, head_requests=1 if data.startswith(b"HEAD") else 0)
            self.check("pipelining", name, data, r, mutating=True)
            got = r.statuses
            if got != expected:
                self.finding("pipelining", "unexpected-sequence", name, data, "got %s expected %s" % (got, expected))

    # Byte-level mutation of valid requests
    SPECIAL = [b"\r\n", b"\n", b"\r", b"\x00", b":", b" ", b"\t", b",", b";", b"chunked", b"\xff", b"%00", b"%ff", b"%",
               b"Content-Length: 99999999999999999999\r\n", b"Transfer-Encoding: chunked\r\n", b"0\r\n\r\n",
               b"Expect: 100-continue\r\n", b"Content-Length: -1\r\n", b"Host: y\r\n", b"../", b"%2e%2e/", b"\r\n\r\n",
               b"HTTP/1.1", b"ffffffff", b"{", b"}", b"[", b'"', b"\\u0000", b"\\ud800", b"1e999", b"-", b"Range: bytes=-\r\n"]

    def seeds(self):
        key = self.blob_keys[0]
        body = b'{"name":"m"}'
        return [
            request("GET", "/health"),
            request("GET", "/parse/classes/Photo?where=%7B%22title%22%3A%22x%22%7D&limit=5&order=-createdAt", self.app),
            request("GET", "/parse/classes/Photo/" + self.photo_ids[0] + "?keys=title", self.app),
            request("POST", "/parse/classes/Gallery", self.app + [("Content-Type", "application/json")], body),
            request("POST", "/parse/classes/Gallery", self.app + [("Transfer-Encoding", "chunked")], chunked(body, [3, 4])),
            request("PUT", "/parse/classes/Gallery/" + self.gallery_ids[0], self.app, b'{"name":"fuzz gallery"}'),
            request("GET", "/bucket/" + key, [("Range", "bytes=0-10"), ("If-None-Match", '"x"')]),
            request("POST", "/parse/batch", self.app, json.dumps({"requests": [
                {"method": "GET", "path": "/parse/classes/Photo/" + self.photo_ids[0]}]}).encode()),
            request("POST", "/parse/files/m.jpg", self.app, vary_jpeg(BASELINE_JPEG, "mutation seed")),
        ]

    def mutate(self, data):
        rng = self.rng
        data = bytearray(data)
        for _ in range(rng.choice([1, 1, 2, 3, 5])):
            op = rng.randrange(7)
            pos = rng.randrange(len(data) + 1)
            if op == 0 and data:
                data[min(pos, len(data) - 1)] ^= 1 << rng.randrange(8)
            elif op == 1:
                data[pos:pos] = rng.choice(self.SPECIAL)
            elif op == 2 and data:
                end = min(len(data), pos + rng.randrange(1, 40))
                del data[pos:end]
            elif op == 3 and data:
                end = min(len(data), pos + rng.randrange(1, 40))
                data[pos:pos] = data[pos:end] * rng.randrange(1, 50)
            elif op == 4:
                data[pos:pos] = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 16)))
            elif op == 5 and data:
                data[min(pos, len(data) - 1)] = rng.choice(b"\x00\r\n :;,\xff\x7f0123456789abcdefABCDEF-")
            else:
                other = rng.choice(self.seeds_cache)
                cut = rng.randrange(len(other) + 1)
                data = data[:pos] + other[cut:]
        return bytes(data)

    def g_mutation(self):
        self.seeds_cache = self.seeds()
        for i in range(self.args.mutations):
            data = self.mutate(self.rng.choice(self.seeds_cache))
            shut = self.rng.random() < 0.9
            r = self.t.exchange(data, timeout=self.args.case_timeout if shut else 0.5, shut=shut)
            if not shut:
                # Kept open: an incomplete request may legitimately wait; only a complete answer is judged.
                r.timed_out = False
            self.check("mutation", "mutation #%d" % i, data, r, allow_silent_close=True, allowed_5xx=(501, 505),
                       mutating=True)
            if self.out_of_time():
                return

    def g_concurrent(self):
        """The mutation mix from many clients at once, with valid requests in between, so races between
        event loops, the handler pool and the database pool get a chance to show."""
        from concurrent.futures import ThreadPoolExecutor
        self.seeds_cache = self.seeds()
        valid = [request("GET", "/health"), request("GET", "/parse/classes/Photo?limit=5&count=1", self.app),
                 request("GET", "/bucket/" + self.blob_keys[0], [("Range", "bytes=0-99")]),
                 request("GET", "/parse/classes/Photo/" + self.photo_ids[0], self.app + [("Accept-Encoding", "gzip")])]
        jobs = []
        for i in range(self.args.mutations):
            if i % 3 == 0:
                jobs.append(("valid #%d" % i, self.rng.choice(valid), True))
            else:
                jobs.append(("concurrent mutation #%d" % i, self.mutate(self.rng.choice(self.seeds_cache)), False))

        def run(job):
            name, data, is_valid = job
            return name, data, is_valid, self.t.exchange(data, timeout=self.args.case_timeout + 5)

        # A client retrying a create while the first attempt is in flight: every answer is the one photo.
        body = vary_jpeg(BASELINE_JPEG, "concurrent create %d" % self.args.seed)
        r = self.t.exchange(request("POST", "/parse/files/same.jpg", self.app, body), timeout=10)
        if r.first() and r.first()[0] == 201:
            create = request("POST", "/parse/classes/Photo", self.app + [("Content-Type", "application/json")],
                             json.dumps({"original": {"__type": "File", "name": json.loads(r.first()[2])["name"]}}).encode())
            for i in range(self.args.concurrency):
                jobs.insert(0, ("concurrent create #%d" % i, create, "create"))
        # The same bytes uploaded by many clients at once: every upload gets its 201, once it gets past
        # max_uploads_per_user (8 in progress at once; more are answered 429 {"code":155} with
        # Retry-After on the head: docs/operations.md, "Full disks, failed photos, killed workers"),
        # so a 429 of that shape is retried below and must then succeed.
        for k in range(8):
            same = request("POST", "/parse/files/same.jpg", self.app,
                           vary_jpeg(BASELINE_JPEG, "concurrent upload %d %d" % (self.args.seed, k)))
            for i in range(self.args.concurrency):
                jobs.insert(0, ("concurrent upload %d #%d" % (k, i), same, "upload"))
        self.batch_mutated = True

        retry = []
        with ThreadPoolExecutor(max_workers=self.args.concurrency) as pool:
            for name, data, is_valid, r in pool.map(run, jobs):
                if is_valid == "create":
                    self.check("concurrent", "same photo created concurrently", data, r, allow={200, 201})
                    continue
                if is_valid == "upload":
                    if self.upload_limited(r):
                        retry.append(data)
                        continue
                    self.check("concurrent", "same bytes uploaded concurrently", data, r, allow={201})
                    continue
                if is_valid:
                    self.check("concurrent", name, data, r, allow={200, 206})
                else:
                    self.check("concurrent", name, data, r, allow_silent_close=True, allowed_5xx=(501, 505),
                               mutating=True)

        # One at a time now: nothing else of this user's is in progress, so each must be created.
        for data in retry:
            for _ in range(20):
                r = self.t.exchange(data, timeout=10)
                if not self.upload_limited(r):
                    break
                time.sleep(0.25)
            self.check("concurrent", "same bytes uploaded again after 429", data, r, allow={201})
        print("  concurrent: %d uploads answered 429 code 155 and retried" % len(retry))

    @staticmethod
    def upload_limited(r):
        """The documented answer past max_uploads_per_user: 429, code 155, Retry-After."""
        first = r.first()
        if not first or first[0] != 429 or "retry-after" not in first[1]:
            return False
        try:
            return json.loads(first[2]).get("code") == 155
        except ValueError:
            return False

    # Parse API
    FIELDS = ["objectId", "createdAt", "updatedAt", "filename", "title", "tags", "contentType", "byteSize", "checksum",
              "width", "height", "aspectRatio", "takenAt", "status", "error", "dominantColor", "deletedAt", "original",
              "thumbnail", "preview", "thumbnailWidth", "name", "photoCount", "coverPhoto", "gallery", "photo",
              "position", "ACL", "_rperm", "nope", "", "$score", "title.x", "gallery.name", "photo.title"]
    OPS = ["$lt", "$lte", "$gt", "$gte", "$ne", "$in", "$nin", "$exists", "$eq", "$or", "$and", "$regex", "$options",
           "$text", "$search", "$term", "$all", "$select", "$dontSelect", "$inQuery", "$notInQuery", "$relatedTo",
           "$near", "$within", "$nor", "$not", "$containedBy", "$elemMatch", "$where", "$foo"]
    CLASSES = ["Photo", "Gallery", "GalleryItem", "_User", "_Session", "_Role", "_Installation", "_SCHEMA", "_Hooks",
               "_GlobalConfig", "_JobStatus", "_PushStatus", "_Audience", "_Idempotency", "photo", "PHOTO", "Photo ",
               "Photo.", "Ph%6fto", "Photo%00", "Photo%2F..", "..", "%2e%2e", "a" * 300, "\u00c9t\u00e9", "123",
               "_", "Photo;drop", "Photo'--", "%ff", "Photo%20", "Gallery%2FItem", "Photos"]

    def objectid_shapes(self):
        real = self.photo_ids + self.gallery_ids + self.item_ids
        return real + ["", "a", "zzzzzzzzzz", "A" * 10, "A" * 32, "A" * 33, "A" * 5000, "%00", "abc%00def",
                       self.photo_ids[0] + "%00x", "%2e%2e", "..", "%2F", "a%20b", "%ff", "\u00e9" * 5, "'or'1'='1",
                       "1;select pg_sleep(5)", "-1", "0", "null", "%5B%5D", "%7B%7D", "..%2F..%2Fetc", "x" * 9,
                       real[0].lower(), real[0] + "/extra", "%0d%0aX-Injected:%201"]

    def random_scalar(self):
        rng = self.rng
        return rng.choice([
            lambda: rng.randrange(-10**6, 10**6), lambda: rng.choice([0, -1, 2**31, 2**63 - 1, 2**63, -2**63 - 1, 10**30]),
            lambda: rng.random() * 10 ** rng.randrange(-30, 300), lambda: rng.choice([True, False, None]),
            lambda: rng.choice(["", "x", "\u0000", "\ud800", "\U0001F600", "a" * 10000, "%", "'", "\\", "\x01",
                                "2024-01-01T00:00:00.000Z", "9999-99-99T99:99:99Z", "0000-01-01T00:00:00.000Z",
                                "-infinity", "NaN", "^a.*", "(a+)+$", "[", "\\Q", "(?=x)", "a{1000}"]),
            lambda: {"__type": rng.choice(["Date", "Pointer", "File", "Bytes", "GeoPoint", "Relation", "Object", "x", 5]),
                     rng.choice(["iso", "className", "objectId", "name", "base64", "latitude"]): self.random_scalar()},
            lambda: {"__type": "Date", "iso": rng.choice(["2024-02-30T00:00:00.000Z", "2024-01-01", "x", "",
                                                          "99999-01-01T00:00:00.000Z", "2024-01-01T25:00:00.000Z",
                                                          "+002024-01-01T00:00:00.000Z", "2024-01-01T00:00:00.000+99:99"])},
            lambda: {"__type": "Pointer", "className": rng.choice(self.CLASSES),
                     "objectId": rng.choice(self.objectid_shapes())},
        ])()

    def random_json(self, depth=0):
        rng = self.rng
        if depth > 4 or rng.random() < 0.35:
            return self.random_scalar()
        kind = rng.randrange(4)
        if kind == 0:
            return [self.random_json(depth + 1) for _ in range(rng.randrange(0, 5))]
        if kind == 1:
            return {rng.choice(self.OPS): self.random_json(depth + 1) for _ in range(rng.randrange(1, 3))}
        if kind == 2:
            return {rng.choice(self.FIELDS): self.random_json(depth + 1) for _ in range(rng.randrange(1, 4))}
        field = rng.choice(self.FIELDS)
        return {field: {rng.choice(self.OPS): self.random_scalar()}}

    def json_text(self, value):
        """JSON text, sometimes with invalid tokens spliced in."""
        text = json.dumps(value, ensure_ascii=self.rng.random() < 0.5, allow_nan=True)
        r = self.rng.random()
        if r < 0.1:
            text = text.replace("1", "NaN", 1)
        elif r < 0.15:
            text = text[: self.rng.randrange(len(text) + 1)]
        elif r < 0.2:
            text = text.replace('"', "'", 1)
        return text

    def g_parse_query(self):
        T = self.t
        rng = self.rng
        fixed = [
            ("deep where", "where=" + urllib.parse.quote('{"a":' * 10000 + "1" + "}" * 10000), {400, 414}),
            ("deep array where", "where=" + urllib.parse.quote("[" * 3000 + "]" * 3000), {400, 414}),
            ("where depth 17", "where=" + urllib.parse.quote('{"$or":[' * 8 + "{}" + "]}" * 8), {400, 200}),
            ("where NaN", "where=" + urllib.parse.quote('{"width":NaN}'), {400}),
            ("where Infinity", "where=" + urllib.parse.quote('{"width":Infinity}'), {400}),
            ("where 1e999", "where=" + urllib.parse.quote('{"width":1e999}'), {400}),
            ("where -0", "where=" + urllib.parse.quote('{"width":-0}'), {200}),
            ("where huge int", "where=" + urllib.parse.quote('{"width":99999999999999999999999999}'), {400, 200}),
            ("where huge int lt", "where=" + urllib.parse.quote('{"width":{"$lt":9223372036854775808}}'), {400, 200}),
            ("where big double", "where=" + urllib.parse.quote('{"width":{"$gt":1e300}}'), {400, 200}),
            ("where int on double", "where=" + urllib.parse.quote('{"aspectRatio":{"$gt":9223372036854775807}}'),
             {400, 200}),
            ("where tiny", "where=" + urllib.parse.quote('{"aspectRatio":1e-320}'), {400, 200}),
            ("where lone surrogate", "where=" + urllib.parse.quote('{"title":"\\ud800"}'), {400}),
            ("where u0000", "where=" + urllib.parse.quote('{"title":"\\u0000"}'), {400}),
            ("where raw NUL", "where=%7B%22title%22%3A%22a%00%22%7D", {400}),
            ("where invalid utf8", "where=%7B%22title%22%3A%22%ff%22%7D", {400}),
            ("where overlong utf8", "where=%7B%22title%22%3A%22%c0%ae%22%7D", {400}),
            ("where emoji", "where=" + urllib.parse.quote('{"title":"\\ud83d\\ude00"}'), {200}),
            ("where bad percent", "where=%7", {400}),
            ("where dup key", "where=" + urllib.parse.quote('{"title":"a","title":"b"}'), {400}),
            ("where not object", "where=" + urllib.parse.quote("[1,2]"), {400}),
            ("where string", "where=%22x%22", {400}),
            ("where empty", "where=", {400, 200}),
            ("where 200KB", "where=" + "a" * 8000, {400}),
            ("limit -1", "limit=-1", {400}),
            ("limit huge", "limit=99999999999999999999", {400}),
            ("limit 19 digits", "limit=9223372036854775807", {200}),
            ("limit 19 nines", "limit=9999999999999999999", {400}),
            ("limit float", "limit=1.5", {400}),
            ("limit 1e3", "limit=1e3", {400}),
            ("limit empty", "limit=", {400}),
            ("limit --1", "limit=--1", {400}),
            ("limit 0 count", "limit=0&count=1", {200}),
            ("skip huge", "skip=9223372036854775807", {400}),
            # max_query_skip (10000): 102 beyond it (docs/operations.md, the configuration table).
            ("skip max", "skip=10000", {200}),
            ("skip past max", "skip=10001", {400}),
            ("skip 10000000", "skip=10000000", {400}),
            ("skip negative", "skip=-5", {400}),
            ("count 2", "count=2", {400}),
            ("order garbage", "order=" + urllib.parse.quote(",,-,--title,$score"), {400}),
            ("order unknown", "order=nope", {400}),
            ("order dup", "order=title,-title", {400}),
            ("order 1000 keys", "order=" + ",".join(["title"] * 1000), {400}),
            ("keys garbage", "keys=" + urllib.parse.quote("a.b.c,,$score,.."), {400}),
            ("keys many", "keys=" + ",".join(["title"] * 1000), {200, 414}),
            ("include star", "include=*", {200}),
            ("include deep", "include=coverPhoto.x.y", {400}),
            ("include unknown", "include=nope", {400}),
            ("unknown param", "fuzz=1", {400}),
            ("dup param", "limit=1&limit=2", {400}),
            ("encoded names", "%6c%69%6d%69%74=1", {200}),
            ("param no value", "where", {400}),
            ("only ampersands", "&&&&", {200}),
            ("plus and percent", "where=%7B%22title%22%3A%22a+b%25%22%7D", {200}),
            ("regex catastrophic", "where=" + urllib.parse.quote('{"title":{"$regex":"(a+)+$"}}'), {200, 400}),
            ("regex bad", "where=" + urllib.parse.quote('{"title":{"$regex":"["}}'), {400}),
            ("regex options", "where=" + urllib.parse.quote('{"title":{"$regex":"a","$options":"ixq"}}'), {400}),
            ("regex backref", "where=" + urllib.parse.quote('{"title":{"$regex":"(a)\\\\1"}}'), {400, 200}),
            ("regex repetition", "where=" + urllib.parse.quote('{"title":{"$regex":"a{1000}"}}'), {400}),
            ("regex long", "where=" + urllib.parse.quote('{"title":{"$regex":"' + "a" * 300 + '"}}'), {400}),
            ("regex on int", "where=" + urllib.parse.quote('{"width":{"$regex":"1"}}'), {400}),
            ("text search", "where=" + urllib.parse.quote('{"title":{"$text":{"$search":{"$term":"!!&|:*"}}}}'),
             {200, 400}),
            ("text tsquery syntax", "where=" + urllib.parse.quote(
                '{"$text":{"$search":{"$term":"a & ! ( b | :* "}}}'), {200, 400}),
            ("in 1001", "where=" + urllib.parse.quote(json.dumps({"title": {"$in": ["x"] * 1001}})), {400, 414}),
            ("in 1001 short", "where=" + urllib.parse.quote(json.dumps({"width": {"$in": list(range(1001))}}))[:8000], {400, 414}),
            ("in mixed types", "where=" + urllib.parse.quote('{"width":{"$in":[1,"a",null,{},[]]}}'), {400}),
            ("or 201", "where=" + urllib.parse.quote(json.dumps({"$or": [{"title": "x"}] * 201})), {400}),
            ("or empty", "where=" + urllib.parse.quote('{"$or":[]}'), {400, 200}),
            ("exists string", "where=" + urllib.parse.quote('{"title":{"$exists":"yes"}}'), {400}),
            ("date garbage", "where=" + urllib.parse.quote('{"createdAt":{"$gt":{"__type":"Date","iso":"2024-13-45T99:99:99.999Z"}}}'), {400}),
            ("date year 0", "where=" + urllib.parse.quote('{"createdAt":{"$gt":{"__type":"Date","iso":"0000-01-01T00:00:00.000Z"}}}'), {400, 200}),
            ("date year 99999", "where=" + urllib.parse.quote('{"createdAt":{"$gt":{"__type":"Date","iso":"99999-01-01T00:00:00.000Z"}}}'), {400, 200}),
            ("date string", "where=" + urllib.parse.quote('{"createdAt":{"$gt":"2024-01-01T00:00:00.000Z"}}'), {400, 200}),
            ("pointer wrong class", "where=" + urllib.parse.quote('{"coverPhoto":{"__type":"Pointer","className":"Gallery","objectId":"x"}}'), {400}),
            ("pointer bad id", "where=" + urllib.parse.quote('{"coverPhoto":{"__type":"Pointer","className":"Photo","objectId":"\\u00e9%00"}}'), {400, 200}),
            ("objectId NUL in where", "where=" + urllib.parse.quote('{"objectId":"a\\u0001b"}'), {400, 200}),
            ("long string value", "where=" + urllib.parse.quote(json.dumps({"title": "x" * 9000})), {400, 414}),
            ("tags all", "where=" + urllib.parse.quote('{"tags":{"$all":[1,2]}}'), {400}),
            ("tags in nested", "where=" + urllib.parse.quote('{"tags":{"$in":[["a"]]}}'), {400}),
        ]
        for cls in ("Photo", "Gallery", "GalleryItem"):
            for name, query, allow in fixed:
                if cls != "Photo" and allow and allow <= {200}:
                    allow = None
                elif cls != "Photo":
                    allow = (allow or set()) | {400}
                target = "/parse/classes/%s?%s" % (cls, query)
                data = request("GET", target, self.app)
                r = T.exchange(data, timeout=self.args.case_timeout + 10)
                self.check("parse-query", "%s %s" % (cls, name), data, r, allow=allow, fmt="json",
                           code=102 if name in ("skip past max", "skip 10000000") else None)
        for cls in self.CLASSES:
            for oid in self.objectid_shapes()[:: max(1, len(self.objectid_shapes()) // 12)]:
                target = "/parse/classes/%s/%s" % (urllib.parse.quote(cls, safe="%"), urllib.parse.quote(oid, safe="%/"))
                data = request("GET", target, self.app)
                r = T.exchange(data, timeout=self.args.case_timeout)
                self.check("parse-query", "get %s/%s" % (cls[:20], oid[:20]), data, r, fmt=expected_format(target))
        for i in range(self.args.api_cases):
            cls = rng.choice(["Photo", "Gallery", "GalleryItem", rng.choice(self.CLASSES)])
            params = []
            for name in rng.sample(["where", "order", "keys", "include", "limit", "skip", "count", "excludeKeys",
                                    rng.choice(["x", "_method", "where"])], rng.randrange(1, 5)):
                if name == "where":
                    value = self.json_text(self.random_json())
                elif name in ("limit", "skip"):
                    value = rng.choice(["0", "1", "-1", "1000", "1001", str(2**63), "x", "", "1e2", " 5", "0x10"])
                elif name == "count":
                    value = rng.choice(["1", "0", "true", "yes", ""])
                else:
                    value = ",".join(rng.choice(self.FIELDS + ["*", "-title", "$score", "a.b.c"])
                                     for _ in range(rng.randrange(0, 5)))
                params.append(urllib.parse.quote(name) + "=" + urllib.parse.quote(value, safe="", errors="surrogatepass"))
            target = "/parse/classes/%s?%s" % (urllib.parse.quote(cls, safe="%"), "&".join(params))
            data = request("GET", target, self.app)
            r = T.exchange(data, timeout=self.args.case_timeout + 10)
            self.check("parse-query", "random query #%d" % i, data, r, fmt=expected_format(target))
            if self.out_of_time():
                return
        # Keys: none, wrong, non-ASCII.
        for name, hs, allow in [("no app id", [], {403}), ("wrong app id", [("X-Parse-Application-Id", "nope")], {403}),
                                ("wrong master", self.app + [("X-Parse-Master-Key", "x" * 16)], {200}),
                                ("purge no master", self.app, {403})]:
            target = "/parse/purge/Photo" if "purge" in name else "/parse/classes/Photo"
            data = request("DELETE" if "purge" in name else "GET", target, hs)
            r = T.exchange(data, timeout=self.args.case_timeout)
            self.check("parse-query", name, data, r, allow=allow, fmt="json")

    def g_parse_write(self):
        T = self.t
        rng = self.rng
        ids = {"Photo": self.photo_ids, "Gallery": self.gallery_ids, "GalleryItem": self.item_ids}
        bodies = [
            (b"", {400}), (b"{", {400}), (b"null", {400}), (b"[]", {400}), (b"1", {400}), (b'"x"', {400}),
            (b"\xff\xfe{}", {400}), (b'{"name":"\xff"}', {400}), (b'{"name":"a\\u0000"}', {400}),
            (b'{"name":"\\ud800"}', {400}), (b'{"name":1e999}', {400}), (b'{"name":NaN}', {400}),
            (b'{"name":"x"}garbage', {400}), (b'{"name":"x","name":"y"}', {400}),
            (b'{"objectId":"abcdefghij","name":"x"}', {400}), (b'{"createdAt":"2024"}', {400}),
            (b'{"ACL":{"*":{"read":true}}}', {400, 200, 201}), (b'{"name":{"__op":"Delete"}}', {400}),
            (b'{"name":{"__op":"Increment","amount":1}}', {400}), (b'{"title":{"__op":"Batch","ops":[]}}', {400}),
            (b'{"tags":{"__op":"AddUnique","objects":[1,2]}}', {400}),
            (b'{"tags":{"__op":"Add","objects":["a"]}}', {400, 200}),
            (b'{"tags":["' + b'a' * 200 + b'"]}', {400}), (b'{"tags":' + json.dumps(["t"] * 101).encode() + b"}", {400}),
            (b'{"title":"' + b"t" * 1001 + b'"}', {400}), (b'{"position":-1}', {400}),
            (b'{"position":9223372036854775807}', {400}), (b'{"position":1.5}', {400}), (b'{"position":"1"}', {400}),
            (b'{"position":99999999999999999999}', {400}), (b'{"deletedAt":{"__op":"Delete"}}', {400, 200}),
            (b'{"deletedAt":{"__type":"Date","iso":"2024-01-01T00:00:00.000Z"}}', {400}),
            (b'{"name":"   "}', {400}), (b'{"name":"' + b"n" * 201 + b'"}', {400}),
            (b'{"gallery":{"__type":"Pointer","className":"Photo","objectId":"x"}}', {400}),
            (b'{"photo":{"__type":"Pointer","className":"Photo","objectId":"' + b"A" * 5000 + b'"}}', {400, 404}),
            (b'{"original":{"__type":"File","name":"../../etc/passwd"}}', {400}),
            (b'{"original":{"__type":"File","name":"' + b"a" * 5000 + b'"}}', {400}),
            (b'{"coverPhoto":{"__type":"Pointer","className":"Photo","objectId":"zzzzzzzzzz"}}', {400, 404}),
            (b'{' + b'"a":{' * 5000 + b"}" * 5001, {400}),
            (b'{"name":"x","extra":1}', {400}),
            (b'{"name":"' + b"\\u00e9" * 100 + b'"}', {400, 200, 201}),
        ]
        for cls in ("Photo", "Gallery", "GalleryItem", "_User", "Nope"):
            for body, allow in bodies:
                for method in ("POST", "PUT"):
                    oid = rng.choice(ids.get(cls, ["zzzzzzzzzz"]))
                    target = "/parse/classes/%s" % cls + ("/" + oid if method == "PUT" else "")
                    ctype = rng.choice(["application/json", "text/plain", "application/x-www-form-urlencoded",
                                        "multipart/form-data; boundary=x", "image/jpeg", "", "application/json; charset=latin1"])
                    hs = self.app + ([("Content-Type", ctype)] if ctype else [])
                    data = request(method, target, hs, body)
                    r = T.exchange(data, timeout=self.args.case_timeout)
                    a = allow if cls in ("Photo", "Gallery", "GalleryItem") else {400, 404}
                    # Deleting a field the class lacks: on Gallery `name` is fixed (400); Photo and
                    # GalleryItem have no `name`, and there it is an app field's Delete (decision 042,
                    # "Writes": parsed as a custom class's fields), which adds no field and changes
                    # nothing (CustomFieldType.inferred: "Delete" -> nil), as Parse Server's unset.
                    absent_delete = body == b'{"name":{"__op":"Delete"}}' and cls in ("Photo", "GalleryItem")
                    if absent_delete:
                        a = {200, 400}
                    # Successful bodies may be refused for a class they do not fit.
                    a = None if (a and (a & {200, 201})) else (a | {400, 404} if a else None)
                    self.check("parse-write", "%s %s %r" % (method, cls, body[:40]), data, r, allow=a, fmt="json",
                               mutating=True)
                    if absent_delete and r.first() and r.first()[0] == 200:
                        got = T.exchange(request("GET", "/parse/classes/%s/%s" % (cls, oid), self.app), timeout=5)
                        try:
                            changed = not got.first() or got.first()[0] != 200 or "name" in json.loads(got.first()[2])
                        except ValueError:
                            changed = True
                        if changed:
                            self.finding("parse-write", "absent-delete-changed", "%s %s" % (method, cls), data,
                                         "after 200: %s %r" % (got.statuses, got.raw[:200]))
        # An ACL on GalleryItem, which has none (an item is read through its gallery): a create that is
        # otherwise valid must be answered below 500, and when refused must leave no item behind.
        def item_count():
            got = T.exchange(request("GET", "/parse/classes/GalleryItem?count=1&limit=0", self.app), timeout=5)
            try:
                return json.loads(got.first()[2]).get("count")
            except (TypeError, ValueError, AttributeError):
                return None
        before = item_count()
        body = json.dumps({"gallery": {"__type": "Pointer", "className": "Gallery", "objectId": self.gallery_ids[0]},
                           "photo": {"__type": "Pointer", "className": "Photo", "objectId": self.photo_ids[-1]},
                           "ACL": {"*": {"read": True}}}).encode()
        data = request("POST", "/parse/classes/GalleryItem", self.app + [("Content-Type", "application/json")], body)
        r = T.exchange(data, timeout=self.args.case_timeout)
        self.check("parse-write", "POST GalleryItem with an ACL", data, r, fmt="json", mutating=True)
        after = item_count()
        if r.first() and r.first()[0] >= 400 and before is not None and after != before:
            self.finding("parse-write", "refused-but-written", "POST GalleryItem with an ACL", data,
                         "answered %d, items %s -> %s" % (r.first()[0], before, after))
        # Bodies over the limits.
        for n, allow in [(1024 * 1024, {400, 413}), (1024 * 1024 + 1, {413}), (256 * 1024 + 1, {400, 413}),
                         (5 * 1024 * 1024, {413})]:
            body = b'{"name":"' + b"x" * max(0, n - 11) + b'"}'
            body = body[:n] if len(body) > n else body
            for method, target in (("POST", "/parse/classes/Gallery"), ("PUT", "/parse/classes/Gallery/" + self.gallery_ids[0]),
                                   ("POST", "/parse/batch")):
                data = request(method, target, self.app, body)
                r = T.exchange(data, timeout=self.args.case_timeout + 5)
                self.check("parse-write", "%s body %d bytes" % (method, n), data[:300], r, allow=allow, fmt="json")
                data = request(method, target, self.app + [("Transfer-Encoding", "chunked")], chunked(body, [65536] * 100),
                               length=False)
                r = T.exchange(data, timeout=self.args.case_timeout + 5)
                self.check("parse-write", "%s chunked body %d bytes" % (method, n), data[:300], r, allow=allow, fmt="json")
        # Random bodies.
        for i in range(self.args.api_cases):
            cls = rng.choice(["Photo", "Gallery", "GalleryItem"])
            method = rng.choice(["POST", "PUT", "PUT", "DELETE"])
            oid = rng.choice(self.objectid_shapes()) if method == "DELETE" else rng.choice(
                ids[cls] + self.objectid_shapes())
            if method == "DELETE" and oid in self.photo_ids + self.gallery_ids + self.item_ids:
                oid = "zzzzzzzzzz"
            value = {rng.choice(self.FIELDS): self.random_json(2) for _ in range(rng.randrange(0, 4))}
            body = self.json_text(value).encode("utf-8", "surrogatepass")
            target = "/parse/classes/%s" % cls + ("" if method == "POST" else "/" + urllib.parse.quote(oid, safe="%/"))
            data = request(method, target, self.app + [("Content-Type", "application/json")], body if method != "DELETE" else b"")
            r = T.exchange(data, timeout=self.args.case_timeout)
            self.check("parse-write", "random write #%d" % i, data, r, fmt=expected_format(target), mutating=True)
            if self.out_of_time():
                return

    def g_parse_batch(self):
        T = self.t
        rng = self.rng
        p = self.photo_ids[0]
        cases = [
            {"requests": [{"method": "POST", "path": "/parse/batch", "body": {"requests": []}}]},
            {"requests": [{"method": "POST", "path": "/parse/batch", "body": {"requests": [
                {"method": "POST", "path": "/parse/batch", "body": {"requests": []}}]}}]},
            {"requests": [{"method": "GET", "path": "/parse/classes/Photo/" + p}] * 51},
            {"requests": [{"method": "GET", "path": "/parse/classes/Photo/" + p}] * 50},
            {"requests": {}}, {"requests": None}, {"requests": [1, "x", None, [], {}]}, {}, {"requests": [], "x": 1},
            {"requests": [{"method": "DELETE", "path": "/parse/purge/Photo"}]},
            {"requests": [{"method": "GET", "path": "/parse/classes/Photo"}]},
            {"requests": [{"method": "GET", "path": "/parse/classes/Photo/" + p + "?keys=title"}]},
            {"requests": [{"method": "GET", "path": "/parse/../../classes/Photo/" + p}]},
            {"requests": [{"method": "PATCH", "path": "/parse/classes/Photo/" + p}]},
            {"requests": [{"method": "GET", "path": "/parse/classes/Photo/" + p + "/x/y"}]},
            {"requests": [{"method": "GET", "path": "/parse/classes/Photo/%00"}]},
            {"requests": [{"method": "GET", "path": "/parse/classes/Photo/a\u0001b"}]},
            {"requests": [{"method": "GET", "path": ""}]}, {"requests": [{"method": "", "path": "/parse/classes/Photo"}]},
            {"requests": [{"method": "GET", "path": "/parse/classes/Photo/" + p, "body": "x" * 100000}]},
            {"requests": [{"method": 5, "path": ["x"], "body": 1}]},
            {"requests": [{"method": "PUT", "path": "/parse/classes/Photo/" + p, "body": {"title": {"__op": "Nope"}}}]},
            {"requests": [{"method": "POST", "path": "/parse/classes/Photo", "body": {
                "original": {"__type": "File", "name": "nope.jpg"}}}]},
            {"requests": [{"method": "POST", "path": "/parse/files/x.jpg", "body": {}}]},
            {"requests": [{"method": "GET", "path": "/parse/classes/Photo/" + p, "extra": 1}]},
        ]
        for i, doc in enumerate(cases):
            body = json.dumps(doc).encode()
            data = request("POST", "/parse/batch", self.app + [("Content-Type", "application/json")], body)
            r = T.exchange(data, timeout=self.args.case_timeout + 5)
            self.check("parse-batch", "batch case %d %s" % (i, body[:60]), data, r, fmt="json", mutating=True)
        for i in range(self.args.api_cases // 2):
            reqs = []
            for _ in range(rng.randrange(0, 6)):
                cls = rng.choice(self.CLASSES[:6])
                reqs.append({"method": rng.choice(["GET", "PUT", "POST", "DELETE", "get", "HEAD"]),
                             "path": rng.choice(["/parse/classes/%s" % cls, "/classes/%s" % cls,
                                                 "/parse/classes/%s/%s" % (cls, rng.choice(self.objectid_shapes())),
                                                 "/parse/batch", "/x", "/parse/classes"]),
                             "body": self.random_json(2)})
            doc = {"requests": reqs} if rng.random() < 0.9 else self.random_json()
            body = self.json_text(doc).encode("utf-8", "surrogatepass")
            # Never delete the seeded objects through batch.
            for oid in self.photo_ids + self.gallery_ids + self.item_ids:
                if b"DELETE" in body and oid.encode() in body:
                    body = body.replace(oid.encode(), b"zzzzzzzzzz")
            data = request("POST", "/parse/batch", self.app, body)
            r = T.exchange(data, timeout=self.args.case_timeout + 5)
            self.check("parse-batch", "random batch #%d" % i, data, r, fmt="json", mutating=True)
            if self.out_of_time():
                return

    # Bucket
    def g_bucket(self):
        T = self.t
        key = self.blob_keys[0]
        size = len(vary_jpeg(BASELINE_JPEG, "seed %d 0" % self.args.seed))
        traversal = ["../etc/passwd", "..%2fetc%2fpasswd", "%2e%2e/%2e%2e/etc/passwd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
                     "..%252f..%252fetc%252fpasswd", "%252e%252e/etc/passwd", "....//....//etc/passwd", "..\\..\\etc\\passwd",
                     "%c0%ae%c0%ae/etc/passwd", "%e0%80%ae%e0%80%ae/etc/passwd", "\u2025/etc/passwd",
                     "originals/../../../../etc/passwd", "originals/..%2f..%2f..%2fetc%2fpasswd", "/etc/passwd",
                     "%2fetc%2fpasswd", "//etc/passwd", ".tmp/x", "%2etmp/x", ".", "..", "%00", "originals/%00.jpg",
                     "originals/x.jpg%00.txt", "originals", "originals/", "originals//x", "a" * 1025, "a/" * 600,
                     ("a" * 255 + "/") * 4 + "x", "a" * 4000, "originals/" + key.split("/")[-1].upper(),
                     "con", "nul", "x;y", "x%20y", "%ff", "%", "%%", "x?y", "originals/x.jpg?versionId=1", "x#y",
                     "\u00e9", "thumbnails/" + "A" * 300 + ".jpg", "previews/.jpg", "originals/.hidden"]
        for t in traversal:
            quoted = t if "%" in t else urllib.parse.quote(t, safe="/")
            for method in ("GET", "HEAD"):
                target = "/bucket/" + quoted
                data = request(method, target)
                r = T.exchange(data, timeout=self.args.case_timeout, head_requests=1 if method == "HEAD" else 0)
                self.check("bucket", "%s traversal %s" % (method, t[:40]), data, r, allow={400, 404, 414},
                           fmt=None if method == "HEAD" else expected_format(target))
                if r.first() and r.first()[0] == 200:
                    self.finding("bucket", "traversal-served", t, data, "status 200 %r" % r.first()[2][:100])
        for method in ("POST", "PUT", "DELETE", "PATCH", "TRACE", "OPTIONS", "PROPFIND"):
            data = request(method, "/bucket/" + key, body=b"x" if method in ("POST", "PUT") else b"")
            r = T.exchange(data, timeout=self.args.case_timeout)
            self.check("bucket", "method %s" % method, data, r, allow={405, 204, 404, 501}, fmt="xml", allowed_5xx=(501,))
        ranges = ["bytes=-", "bytes=0-0,-1", "bytes=-0", "bytes=0-", "bytes=5-1", "bytes=abc", "bytes=", "bytes",
                  "bytes=99999999999999999999-", "bytes=-99999999999999999999", "bytes=0-99999999999999999999",
                  "bytes=9223372036854775807-", "bytes=-9223372036854775808", "bytes=9223372036854775806-9223372036854775807",
                  "bytes=0-1,2-3", ",".join(["bytes=0-0"] + ["%d-%d" % (i, i) for i in range(1, 2000)]),
                  "bytes = 0-1", "BYTES=0-1", "items=0-1", "bytes=--1", "bytes=1--2", "bytes=0x10-0x20",
                  "bytes=%d-" % size, "bytes=%d-%d" % (size - 1, size + 100), "bytes=-%d" % (size + 1),
                  "bytes=0-0\x01", "bytes=1-1 ", "bytes=\t0-1", "bytes=0-1,", "bytes=,0-1", "bytes=0-1;x",
                  "bytes=" + "0" * 5000 + "-1", "bytes=1-0", "bytes=-1-2", "bytes=1e3-"]
        for rng_value in ranges:
            data = request("GET", "/bucket/" + key, [("Range", rng_value.encode("latin-1"))])
            r = T.exchange(data, timeout=self.args.case_timeout)
            self.check("bucket", "range %r" % rng_value[:40], data, r, allow={200, 206, 416, 400, 431}, fmt="xml")
            first = r.first()
            if first and first[0] == 206:
                m = re.match(r"bytes (\d+)-(\d+)/(\d+)$", first[1].get("content-range", ""))
                if not m:
                    if "multipart" not in first[1].get("content-type", ""):
                        self.finding("bucket", "bad-content-range", rng_value, data, first[1].get("content-range", ""))
                else:
                    a, b, total = map(int, m.groups())
                    if not (0 <= a <= b < total and len(first[2]) == b - a + 1):
                        self.finding("bucket", "inconsistent-206", rng_value, data, "%s body %d" % (m.group(0), len(first[2])))
            if first and first[0] == 200 and len(first[2]) != size:
                self.finding("bucket", "short-200", rng_value, data, "body %d of %d" % (len(first[2]), size))
        conditions = [
            ("If-None-Match", "garbage"), ("If-None-Match", "*"), ("If-None-Match", '"' + "a" * 5000 + '"'),
            ("If-None-Match", 'W/"x", "y", ,,'), ("If-None-Match", '"unterminated'), ("If-Match", "garbage"),
            ("If-Match", "*"), ("If-Match", '"x"'), ("If-Match", ","), ("If-Modified-Since", "garbage"),
            ("If-Modified-Since", "Sun, 99 Foo 9999 99:99:99 GMT"), ("If-Modified-Since", ""),
            ("If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT"), ("If-Modified-Since", "Fri, 31 Dec 9999 23:59:59 GMT"),
            ("If-Modified-Since", "Sat, 01 Jan 0000 00:00:00 GMT"), ("If-Modified-Since", "Sunday, 06-Nov-94 08:49:37 GMT"),
            ("If-Modified-Since", "Sun Nov  6 08:49:37 1994"), ("If-Modified-Since", "-1"), ("If-Modified-Since", "1" * 400),
            ("If-Modified-Since", "Mon, 32 Jan 2024 25:61:61 GMT"),
            ("If-Modified-Since", "Fri, 31 Dec 99999999999 23:59:59 GMT"), ("If-Modified-Since", "Fri, 31 Dec -1 23:59:59 GMT"),
            ("If-Modified-Since", "Fri, 99999999999999999999 Dec 2024 23:59:59 GMT"),
            ("If-Unmodified-Since", "Fri, 31 Dec 2147485547 23:59:59 GMT"), ("If-Range", "Fri, 31 Dec 99999999999 23:59:59 GMT"),
            ("If-Modified-Since", "Fri, 31 Dec 2024 99999999999999999999:00:00 GMT"), ("If-Unmodified-Since", "garbage"),
            ("If-Unmodified-Since", "Thu, 01 Jan 1970 00:00:00 GMT"), ("If-Unmodified-Since", "Fri, 31 Dec 9999 23:59:59 GMT"),
            ("If-Range", "garbage"), ("If-Range", '"x"'), ("If-Range", "Thu, 01 Jan 1970 00:00:00 GMT"),
            ("If-Range", 'W/"x"'), ("If-Range", ""),
        ]
        for name, value in conditions:
            for extra in ([], [("Range", "bytes=0-9")]):
                data = request("GET", "/bucket/" + key, [(name, value)] + extra)
                r = T.exchange(data, timeout=self.args.case_timeout)
                self.check("bucket", "%s %r%s" % (name, value[:30], " +range" if extra else ""), data, r,
                           allow={200, 206, 304, 412, 400}, fmt="xml")
        # Real validators.
        r = T.exchange(request("GET", "/bucket/" + key), timeout=5)
        if r.first():
            etag = r.first()[1].get("etag", "")
            lm = r.first()[1].get("last-modified", "")
            for name, value, want in [("If-None-Match", etag, {304}), ("If-Match", etag, {200}),
                                      ("If-Modified-Since", lm, {304}), ("If-Unmodified-Since", lm, {200}),
                                      ("If-None-Match", "W/" + etag, {304}), ("If-Match", "W/" + etag, {412})]:
                data = request("GET", "/bucket/" + key, [(name, value)])
                r = T.exchange(data, timeout=self.args.case_timeout)
                self.check("bucket", "validator %s" % name, data, r, allow=want, fmt="xml")

    # Uploads
    def upload(self, name, body, extra=(), chunk_sizes=None, timeout=None, **kw):
        hs = self.app + [("Content-Type", "image/jpeg")] + list(extra)
        if chunk_sizes is not None:
            data = request("POST", "/parse/files/" + name, hs + [("Transfer-Encoding", "chunked")],
                           chunked(body, chunk_sizes), length=False)
        else:
            data = request("POST", "/parse/files/" + name, hs, body)
        return data, self.t.exchange(data, timeout=timeout or self.args.case_timeout + 10, **kw)

    def g_uploads(self):
        rng = self.rng
        jpeg = vary_jpeg(BASELINE_JPEG, "uploads %d" % self.args.seed)
        prog = vary_jpeg(PROGRESSIVE_JPEG, "uploads %d" % self.args.seed)
        cases = [
            ("zero-byte", b"", {400}),
            ("one byte", b"\xff", {400}),
            ("SOI only", b"\xff\xd8", {400}),
            ("SOI EOI", b"\xff\xd8\xff\xd9", {400}),
            ("png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, {400}),
            ("gif", b"GIF89a" + b"\x00" * 100, {400}),
            ("text", b"hello world", {400}),
            ("html", b"<html><script>alert(1)</script></html>", {400}),
            ("random 1k", bytes(rng.getrandbits(8) for _ in range(1000)), {400}),
            ("65535x65535", with_dimensions(vary_jpeg(jpeg, "big"), 65535, 65535), {400}),
            ("0x0", with_dimensions(vary_jpeg(jpeg, "zero"), 0, 0), {400}),
            ("0x48", with_dimensions(vary_jpeg(jpeg, "zerow"), 0, 48), {400}),
            ("10001x10000", with_dimensions(vary_jpeg(jpeg, "over"), 10001, 10000), {400}),
            ("9999x10000 declared", with_dimensions(vary_jpeg(jpeg, "under"), 9999, 10000), {201, 400}),
            ("1x65535", with_dimensions(vary_jpeg(jpeg, "tall"), 1, 65535), {201, 400}),
            ("progressive 65535", with_dimensions(vary_jpeg(prog, "pbig"), 65535, 65535), {400}),
            ("5000 scans", with_many_scans(vary_jpeg(prog, "scans"), 5000), {201, 400}),
            ("header only", jpeg[:jpeg.find(b"\xff\xda")], {400}),
            ("truncated after SOS", jpeg[:jpeg.find(b"\xff\xda") + 6], {400, 201}),
            ("truncated in data", jpeg[:len(jpeg) // 2 + 7], {201, 400}),
            ("no EOI", jpeg[:-2], {201, 400}),
            ("garbage after EOI", vary_jpeg(jpeg, "trailing") + b"\x00" * 5000, {201, 400}),
            ("segment length 0", jpeg[:2] + b"\xff\xe0\x00\x00" + jpeg[2:], {400}),
            ("segment length 1", jpeg[:2] + b"\xff\xe1\x00\x01" + jpeg[2:], {400}),
            ("segment length past end", jpeg[:2] + b"\xff\xe1\xff\xff" + b"Exif\x00\x00", {400}),
            ("exif garbage", jpeg[:2] + b"\xff\xe1\x00\x20Exif\x00\x00MM\x00\x2a\xff\xff\xff\xff" + b"\x00" * 14 + jpeg[2:],
             {201, 400}),
            ("exif loop", jpeg[:2] + b"\xff\xe1\x00\x1aExif\x00\x00II\x2a\x00\x08\x00\x00\x00\x01\x00\x12\x01\x03\x00"
             b"\x01\x00\x00\x00" + jpeg[2:], {201, 400}),
            ("many APP segments", jpeg[:2] + (b"\xff\xe5\x00\x04ab" * 20000) + vary_jpeg(jpeg, "app")[2:], {201, 400}),
            ("fill bytes", jpeg[:2] + b"\xff" * 10000 + vary_jpeg(jpeg, "fill")[2:], {201, 400}),
            ("SOF 0 components", self.sof_components(vary_jpeg(jpeg, "c0"), 0), {400}),
            ("SOF 255 components", self.sof_components(vary_jpeg(jpeg, "c255"), 255), {400}),
            ("SOF precision 16", self.sof_precision(vary_jpeg(jpeg, "p16"), 16), {400, 201}),
            ("arithmetic SOF9", self.sof_marker(vary_jpeg(jpeg, "arith"), 0xC9), {400, 201}),
            ("lossless SOF3", self.sof_marker(vary_jpeg(jpeg, "lossless"), 0xC3), {400}),
        ]
        accepted = []
        for name, body, allow in cases:
            data, r = self.upload("fuzz.jpg", body)
            self.check("uploads", name, data, r, allow=allow, fmt="json", mutating=True)
            if r.first() and r.first()[0] == 201:
                accepted.append((name, json.loads(r.first()[2])["name"]))
        # File names.
        for name in ["a" * 129, "a" * 128, "%00.jpg", "a%2Fb.jpg", "..", "%2e%2e", ".jpg", "%ff.jpg", "\u00e9.jpg",
                     "a%0d%0aX:%20y.jpg", "a%01.jpg", "con", "a b.jpg", "a%20b.jpg", "x" * 5000]:
            data, r = self.upload(urllib.parse.quote(name, safe="%"), vary_jpeg(jpeg, "name " + name))
            self.check("uploads", "name %r" % name[:30], data, r, allow={201, 400, 404, 414}, fmt="json", mutating=True)
        # Chunked uploads.
        for sizes in ([1] * 50, [7, 100, 3], [65536], [1, 65535, 100000]):
            data, r = self.upload("chunked.jpg", vary_jpeg(jpeg, "chunked %s" % sizes[:3]), chunk_sizes=sizes)
            self.check("uploads", "chunked %s" % (sizes[:3],), data, r, allow={201}, fmt="json", mutating=True)
        # Wrong content type is fine (Parse looks at bytes), but the route wants keys.
        data = request("POST", "/parse/files/x.jpg", [("Content-Type", "text/plain")], jpeg)
        r = self.t.exchange(data, timeout=self.args.case_timeout)
        self.check("uploads", "no app id", data, r, allow={403}, fmt="json")
        # Aborted mid-body: half the declared bytes, then close / reset. Both sizes: memory and temp file.
        for total in (10000, 3 * 1024 * 1024):
            body = vary_jpeg(jpeg, "abort %d" % total) + b"\x00" * total
            data = request("POST", "/parse/files/abort.jpg", self.app, body)
            for how in ("close", "reset"):
                r = self.t.exchange(data[: len(data) // 2], timeout=2, shut=(how == "close"), rst=(how == "reset"))
                self.cases += 1
        time.sleep(0.3)
        # Limits: at and over maxUploadBytes.
        limit = self.args.upload_limit
        if not self.args.skip_large:
            filler = b"\x00" * (limit - len(jpeg) - 2)
            at_limit = vary_jpeg(jpeg, "limit")
            at_limit = at_limit + filler[: limit - len(at_limit)]
            assert len(at_limit) == limit
            data, r = self.upload("limit.jpg", at_limit, timeout=60)
            self.check("uploads", "exactly maxUploadBytes", data[:300], r, allow={201, 400}, fmt="json", mutating=True)
            data, r = self.upload("over.jpg", at_limit + b"\x00", timeout=60)
            self.check("uploads", "maxUploadBytes + 1", data[:300], r, allow={413}, fmt="json")
            data, r = self.upload("over.jpg", at_limit + b"\x00", chunk_sizes=[1 << 20] * 101, timeout=60)
            self.check("uploads", "chunked maxUploadBytes + 1", data[:300], r, allow={413}, fmt="json")
        data, r = self.upload("huge.jpg", b"", extra=[("Content-Length", str(limit + 1))])
        self.check("uploads", "declared over limit", data, r, allow={413}, fmt="json")
        # Random mutations of a valid JPEG.
        for i in range(self.args.jpeg_mutations):
            body = bytearray(vary_jpeg(rng.choice([jpeg, prog]), "mut %d %d" % (self.args.seed, i)))
            for _ in range(rng.randrange(1, 8)):
                if len(body) < 4:
                    break
                pos = rng.randrange(len(body))
                op = rng.randrange(4)
                if op == 0:
                    body[pos] = rng.getrandbits(8)
                elif op == 1:
                    body[pos:pos] = rng.choice([b"\xff", b"\xff\xd9", b"\xff\xda", b"\xff\xc0", b"\x00\x00", b"\xff\xff"])
                elif op == 2:
                    del body[pos:pos + rng.randrange(1, 100)]
                else:
                    body = body[:pos]
            data, r = self.upload("mut.jpg", bytes(body))
            self.check("uploads", "jpeg mutation #%d" % i, data, r, allow={201, 400}, fmt="json", mutating=True)
            if r.first() and r.first()[0] == 201 and len(accepted) < 60:
                accepted.append(("jpeg mutation #%d" % i, json.loads(r.first()[2])["name"]))
            if self.out_of_time():
                break
        self.process_accepted(accepted)

    def process_accepted(self, accepted):
        """Every hostile file the upload accepted becomes a photo, so the workers decode it: each must
        end ready or failed (never stuck, never taking the process down)."""
        photos = {}
        for name, file_name in accepted:
            body = json.dumps({"original": {"__type": "File", "name": file_name}, "title": "hostile " + name}).encode()
            data = request("POST", "/parse/classes/Photo", self.app + [("Content-Type", "application/json")], body)
            r = self.t.exchange(data, timeout=self.args.case_timeout + 5)
            self.check("uploads", "photo from " + name, data, r, allow={200, 201}, fmt="json", mutating=True)
            if r.first() and r.first()[0] in (200, 201):
                photos[json.loads(r.first()[2])["objectId"]] = name
        deadline = time.monotonic() + self.args.processing_timeout
        pending = dict(photos)
        statuses = {}
        while pending and time.monotonic() < deadline:
            for oid in list(pending):
                r = self.t.exchange(request("GET", "/parse/classes/Photo/" + oid, self.app), timeout=5)
                if not r.first() or r.first()[0] != 200:
                    continue
                doc = json.loads(r.first()[2])
                if doc.get("status") in ("ready", "failed"):
                    statuses[doc["status"]] = statuses.get(doc["status"], 0) + 1
                    if doc["status"] == "ready":
                        for derivative in ("thumbnail", "preview"):
                            if derivative in doc:
                                path = "/bucket/" + doc[derivative]["url"].split("/bucket/", 1)[1]
                                rr = self.t.exchange(request("GET", path), timeout=5)
                                self.check("uploads", "%s of %s" % (derivative, pending[oid]), b"GET " + path.encode(), rr,
                                           allow={200})
                    del pending[oid]
            if pending:
                time.sleep(0.5)
            if not self.obs.alive():
                return
        print("  processed hostile uploads: %s, still pending %d" % (statuses, len(pending)))
        for oid, name in pending.items():
            self.finding("uploads", "not-processed", name, b"", "photo %s still pending after %ds" % (
                oid, self.args.processing_timeout))

    @staticmethod
    def sof_components(jpeg, n):
        at = find_marker(jpeg, 0xC0)
        if at < 0:
            return jpeg
        out = bytearray(jpeg)
        out[at + 9] = n
        return bytes(out)

    @staticmethod
    def sof_precision(jpeg, p):
        at = find_marker(jpeg, 0xC0)
        out = bytearray(jpeg)
        out[at + 4] = p
        return bytes(out)

    @staticmethod
    def sof_marker(jpeg, marker):
        at = find_marker(jpeg, 0xC0)
        out = bytearray(jpeg)
        out[at + 1] = marker
        return bytes(out)

    # Socket behaviour
    def g_sockets(self):
        T = self.t
        ok = request("GET", "/health")
        # Half-closed: request then SHUT_WR must still be answered.
        r = T.exchange(ok, timeout=self.args.case_timeout)
        self.check("sockets", "half-closed after request", ok, r, allow={200})
        # Half a request then SHUT_WR: closed without a response (or 400), never a hang.
        for cut in (1, 5, 20, len(ok) - 2):
            r = T.exchange(ok[:cut], timeout=self.args.case_timeout)
            self.check("sockets", "half request %d then EOF" % cut, ok[:cut], r, allow={400}, allow_silent_close=True)
        # Reset at every stage.
        post = request("POST", "/parse/classes/Gallery", self.app, b'{"name":"reset"}')
        for cut in (0, 10, len(post) - 5, len(post)):
            T.exchange(post[:cut], rst=True)
            self.cases += 1
        # The whole request may have been served before the reset arrived.
        self.batch_mutated = True
        # Reset while the server writes a big response (a bucket file) to a client that does not read.
        key = self.blob_keys[0]
        for _ in range(5):
            s = T.connect()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(request("GET", "/bucket/" + key) * 200)
            time.sleep(0.05)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            self.cases += 1
        # A whole upload (spooled to a temporary file), then a reset while its handler runs.
        for i in range(5):
            body = vary_jpeg(BASELINE_JPEG, "reset while handling %d %d" % (self.args.seed, i)) + b"\x00" * (1 << 20)
            T.exchange(request("POST", "/parse/files/r.jpg", self.app, body), rst=True)
            self.cases += 1
        # Client that never reads a pipelined stream of responses, then closes normally.
        s = T.connect()
        s.sendall(ok * 5000)
        time.sleep(0.5)
        s.close()
        self.cases += 1
        # Bytes after Connection: close must be ignored, not parsed.
        data = request("GET", "/health", [("Connection", "close")]) + b"\x00garbage\r\n\r\n"
        r = T.exchange(data, timeout=self.args.case_timeout)
        self.check("sockets", "garbage after close", data, r, allow={200})
        # Idle keep-alive connections get closed, not leaked (checked by settle); many at once.
        socks = []
        for _ in range(50):
            s = T.connect()
            s.sendall(ok)
            socks.append(s)
        for s in socks:
            s.settimeout(3)
            try:
                s.recv(4096)
            except OSError:
                pass
            s.close()

    def g_slowloris(self):
        """Clients that trickle their head; each must be cut off (408) after the header timeout while
        normal requests keep being served."""
        T = self.t
        n = self.args.slowloris
        socks = []
        for _ in range(n):
            try:
                s = T.connect()
                s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
                socks.append(s)
            except OSError as e:
                self.finding("slowloris", "connect-failed", "slow connect", b"", str(e))
                break
        start = time.monotonic()
        limit = self.args.header_timeout + 5
        cut_off = set()
        slow_health = 0
        while time.monotonic() - start < limit and len(cut_off) < len(socks):
            for i, s in enumerate(socks):
                if i in cut_off:
                    continue
                try:
                    s.sendall(b"X-%d: y\r\n" % i)
                except OSError:
                    cut_off.add(i)
            ok, seconds = self.health()
            if not ok or seconds > 1:
                slow_health += 1
            time.sleep(0.5)
        statuses = []
        for i, s in enumerate(socks):
            s.settimeout(1)
            try:
                data = s.recv(4096)
                statuses.append(data[9:12])
                if data:
                    cut_off.add(i)
                else:
                    cut_off.add(i)
            except OSError:
                pass
            s.close()
        self.cases += len(socks)
        if len(cut_off) < len(socks):
            self.finding("slowloris", "not-cut-off", "slow head", b"", "%d of %d slow clients still connected after %ds" % (
                len(socks) - len(cut_off), len(socks), limit))
        if slow_health:
            self.finding("slowloris", "starved", "health during slowloris", b"", "%d slow/failed health checks" % slow_health)
        print("  slowloris: %d clients cut off, statuses %s" % (len(cut_off), sorted(set(statuses))[:5]))

    def g_flood(self):
        """Connections up to maxConnections and beyond: the extra ones get a quick 503, the server keeps
        serving once they close, and every descriptor comes back."""
        T = self.t
        target = self.args.max_connections + self.args.flood_extra
        socks = []
        failed = 0
        for i in range(target):
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.settimeout(5)
                s.connect((T.host, T.port))
                socks.append(s)
            except OSError:
                failed += 1
            if self.out_of_time():
                break
        time.sleep(1)
        refused = 0
        for s in socks[self.args.max_connections - 5:]:
            s.settimeout(0.5)
            try:
                data = s.recv(200)
                if data.startswith(b"HTTP/1.1 503"):
                    refused += 1
            except OSError:
                pass
        fds = self.obs.fds()
        print("  flood: %d connected, %d failed, %d got 503, server fds %s" % (len(socks), failed, refused, fds))
        if fds and fds[1] > self.args.max_connections:
            self.finding("flood", "over-limit", "connections", b"", "%d client sockets open, limit %d" % (
                fds[1], self.args.max_connections))
        expect_refused = max(0, len(socks) - self.args.max_connections)
        if refused < expect_refused * 0.9:
            self.finding("flood", "no-503", "connections beyond limit", b"",
                         "%d of %d extra connections got a 503" % (refused, expect_refused))
        for s in socks:
            s.close()
        self.cases += len(socks)
        time.sleep(0.5)

    def report(self):
        print()
        print("%d cases; per group: %s" % (self.cases, ", ".join("%s=%d" % kv for kv in self.group_stats.items())))
        if self.rss_history:
            print("RSS after each round (KiB): %s" % self.rss_history)
        if self.expected_warnings:
            print("%d expected warnings in the server log (connection limit, corrupt photos failing)" % self.expected_warnings)
        if self.args.findings:
            with open(self.args.findings, "w") as f:
                json.dump(self.findings, f, indent=1)
        if self.args.record:
            with open(self.args.record, "w") as f:
                for line in self.records:
                    f.write(json.dumps(line) + "\n")
        if not self.findings:
            print("no findings")
            return 0
        print("%d findings:" % len(self.findings))
        for f in self.findings:
            print("  [%s] %s: %s -- %s" % (f["group"], f["kind"], f["case"], f["detail"][:200]))
            if f["preview"] != "b''":
                print("      input: %s" % f["preview"][:200])
        return 1


def self_test():
    """Checks the fd classification on this process: a blob still at its path is a cached blob; one
    deleted, one replaced by a rename, a spool file and a lock under .tmp count against the baseline."""
    import shutil
    import tempfile
    root = tempfile.mkdtemp(prefix="fuzz-self-test-")
    held = []
    try:
        os.makedirs(os.path.join(root, "originals"))
        os.makedirs(os.path.join(root, ".tmp"))

        def hold(rel):
            with open(os.path.join(root, rel), "wb") as f:
                f.write(b"x")
            held.append(open(os.path.join(root, rel), "rb"))
        for rel in ("originals/kept.jpg", "originals/deleted.jpg", "originals/replaced.jpg", ".tmp/spool", ".tmp/h-1.lock"):
            hold(rel)
        os.unlink(os.path.join(root, "originals/deleted.jpg"))
        with open(os.path.join(root, "originals/new"), "wb") as f:
            f.write(b"y")
        os.rename(os.path.join(root, "originals/new"), os.path.join(root, "originals/replaced.jpg"))
        obs = Observer(argparse.Namespace(pid=os.getpid(), port=0, storage_dir=root, database_url=None))
        links = []
        for fd in os.listdir("/proc/%d/fd" % os.getpid()):
            try:
                link = os.readlink("/proc/%d/fd/%s" % (os.getpid(), fd))
            except OSError:
                continue
            if link.startswith(root):
                links.append((fd, link))
        files, cached = obs.classify_files(links)
        got = (sorted(os.path.relpath(c, root) for c in cached),
               sorted(os.path.relpath(f.replace(" (deleted)", ""), root) for f in files))
        want = (["originals/kept.jpg"], [".tmp/h-1.lock", ".tmp/spool", "originals/deleted.jpg", "originals/replaced.jpg"])
        print("self-test: cached %s, counted %s" % got)
        if got != want:
            print("self-test FAILED: expected cached %s, counted %s" % want)
            return 1
        print("self-test ok")
        return 0
    finally:
        for f in held:
            f.close()
        shutil.rmtree(root, ignore_errors=True)


def diff(args):
    """Compares two --record files of one seed (a base binary, then a new one): prints the cases the
    two answered differently. Ids, sessions and timing differ between runs, so groups whose answers
    depend on them (--diff-ignore) are left out; a difference is a lead to --replay, not a finding."""
    ignore = set(args.diff_ignore.split(",")) if args.diff_ignore else set()

    def load(path):
        out = {}
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                # The seed objects' ids (10 characters) differ between runs: cases named by them are
                # matched by position.
                key = (rec["group"], re.sub(r"(?<![A-Za-z0-9])[A-Za-z0-9]{10}(?![A-Za-z0-9])", "<id>", rec["case"]))
                out.setdefault(key, []).append(rec)
        return out
    a, b = (load(p) for p in args.diff)

    def same_inputs(ra, rb):
        # A mutation that hit the session token or an id is a different input in each run: not compared.
        def norm(rec):
            if "norm" in rec:
                return base64.b64decode(rec["norm"])
            data = base64.b64decode(rec["input"])
            data = re.sub(rb"r:[0-9a-f]{64}", b"r:<token>", data)
            return re.sub(rb"(?<![A-Za-z0-9])[A-Za-z0-9]{10}(?![A-Za-z0-9])", b"<id>", data)
        return len(ra) == len(rb) and all(norm(x) == norm(y) for x, y in zip(ra, rb))
    differ = skipped = 0
    for key in sorted(set(a) | set(b)):
        if key[0] in ignore:
            continue
        ra, rb = a.get(key, []), b.get(key, [])
        if not same_inputs(ra, rb):
            skipped += 1
            continue
        sa = [(x["answers"], x["end"]) for x in ra]
        sb = [(x["answers"], x["end"]) for x in rb]
        if sa != sb:
            differ += 1
            print("%s %s\n  %s: %s\n  %s: %s" % (key[0], key[1], args.diff[0], sa[:4], args.diff[1], sb[:4]))
            if rb:
                print("  input: %r" % base64.b64decode(rb[0]["input"])[:300])
    print("%d cases answered differently (%d and %d cases recorded; %d not compared: their inputs differ by the"
          " run's session token or ids)" % (differ, len(a), len(b), skipped))
    return 1 if differ else 0


def replay(args):
    """Resends each finding's input to a server of its own: the session token and seed ids recorded
    in an input belong to the run that found it, so this signs in and seeds as a run does and puts
    its own token and ids in their place (the master key becomes --master-key), so that a replay
    against a new server (bench/fuzz/run.sh --replay FILE) meets the same objects."""
    with open(args.replay) as f:
        findings = json.load(f)
    fuzzer = Fuzzer(args)
    fuzzer.sign_in()
    fuzzer.seed_data()
    for f in findings:
        data = base64.b64decode(f.get("norm") or f["input"])
        if not data:
            continue
        data = fuzzer.fill_in(data)
        if "norm" not in f:  # a findings file from before placeholders: the token alone is replaced
            token = fuzzer.run_values()[b"<token>"]
            data = re.sub(rb"(X-Parse-Session-Token: )r:[0-9a-f]+", lambda m: m.group(1) + token, data)
        if args.master_key:
            data = re.sub(rb"(X-Parse-Master-Key: )[^\r\n]*", lambda m: m.group(1) + args.master_key.encode(), data)
        r = fuzzer.t.exchange(data, timeout=args.case_timeout)
        print("%-40s -> %s %s %s" % (f["case"][:40], r.statuses, "(hang)" if r.timed_out else "",
                                     r.first()[2][:120] if r.first() else b""))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=18095)
    p.add_argument("--pid", type=int, help="server process (default: the one listening on --port)")
    p.add_argument("--storage-dir", help="GALLERYD_STORAGE_DIR, to watch <dir>/.tmp")
    p.add_argument("--database-url", help="to check that rejected requests change no rows")
    p.add_argument("--server-log", help="the server's stderr, scanned for warning/error lines")
    p.add_argument("--app-id", default="gallery")
    p.add_argument("--master-key", default=os.environ.get("GALLERYD_MASTER_KEY"))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--time-limit", type=float, default=240, help="seconds for the whole run (default 240)")
    p.add_argument("--rounds", type=int, default=1, help="repeat the groups (RSS growth is judged from round 3)")
    p.add_argument("--groups", help="comma list of groups to run (default: all)")
    p.add_argument("--case-timeout", type=float, default=3.0, help="seconds without a byte before a case counts as hung")
    p.add_argument("--settle-seconds", type=float, default=3.0)
    p.add_argument("--random-cases", type=int, default=150)
    p.add_argument("--mutations", type=int, default=1500)
    p.add_argument("--api-cases", type=int, default=400)
    p.add_argument("--jpeg-mutations", type=int, default=150)
    p.add_argument("--slowloris", type=int, default=100, help="slow clients at once")
    p.add_argument("--header-timeout", type=float, default=10, help="the server's header timeout in seconds")
    p.add_argument("--max-connections", type=int, default=4096, help="the server's maxConnections")
    p.add_argument("--flood-extra", type=int, default=200)
    p.add_argument("--upload-limit", type=int, default=104857600, help="the server's maxUploadBytes")
    p.add_argument("--skip-large", action="store_true", help="skip the uploads at maxUploadBytes")
    p.add_argument("--processing-timeout", type=float, default=60, help="seconds for the workers to process hostile photos")
    p.add_argument("--concurrency", type=int, default=16, help="clients of the concurrent group")
    p.add_argument("--open-file-cache", type=int, default=1000,
                   help="the server's open_file_cache: blob descriptors it may keep open (docs/operations.md)")
    p.add_argument("--pool-slack", type=int, default=16, help="fds the DB pool and workers may add over the baseline")
    p.add_argument("--rss-growth-kb", type=int, default=64 * 1024)
    p.add_argument("--findings", default="fuzz-findings.json")
    p.add_argument("--record", help="write every case's answers (status, Parse code, how it ended) as JSON lines")
    p.add_argument("--self-test", action="store_true", help="check the fd classification on this process and exit")
    p.add_argument("--diff", nargs=2, metavar=("BASE", "NEW"), help="compare two --record files and exit")
    p.add_argument("--diff-ignore", default="concurrent,sockets,slowloris,flood",
                   help="groups --diff leaves out (their answers depend on timing)")
    p.add_argument("--replay", help="resend the inputs of a findings file and print the statuses")
    args = p.parse_args()
    if args.host not in ("127.0.0.1", "::1", "localhost"):
        p.error("loopback only")
    if args.self_test:
        sys.exit(self_test())
    if args.diff:
        sys.exit(diff(args))
    if args.replay:
        sys.exit(replay(args))
    sys.exit(Fuzzer(args).run())


if __name__ == "__main__":
    main()
