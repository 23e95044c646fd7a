#!/usr/bin/env python3
"""A real HTTPS client for the webhook tests (tests/webhook.rs): httpx (HTTP/2 over ALPN) and the
standard library's http.client and ssl, with PyPI `jsonpatch` applying the patches and PyPI
`prometheus_client` parsing /metrics. Each command prints one JSON document on stdout.

    review URL CA PATH BODYFILE [--http1]   POST a body; status, HTTP version, JSON body
    raw URL CA PATH TEXT                    POST a literal text body
    get URL CA PATH                         GET; status and text
    apply REVIEWFILE PATCH_B64 OUTFILE      apply a base64 JSON Patch to the review's object
    metrics URL CA                          /metrics parsed by prometheus_client
    hammer URL CA BODYFILE SECONDS          a new TLS connection per request until SECONDS pass
    slow URL CA BODYFILE                    send half a body, wait for a line on stdin, send the rest
    idle URL CA N                           open N TLS connections, report which handshakes held
    tls URL CA VERSION                      handshake with only TLS VERSION (1.1, 1.2, 1.3) allowed
    write-first URL CA BODYFILE             HTTP/1.1 over a raw TLS socket: write the whole request
                                            (no Expect: 100-continue), only then read the answer
    soak URL CA VALID BIG SECONDS           valid and oversized reviews mixed, over HTTP/1.1 written
                                            first and over one HTTP/2 connection, until SECONDS pass
"""
import base64
import http.client
import json
import socket
import ssl
import sys
import time
import urllib.parse


def out(value):
    print(json.dumps(value), flush=True)


def context(ca):
    ctx = ssl.create_default_context(cafile=ca)
    return ctx


def review(url, ca, path, body_file, http1=False):
    import httpx

    with open(body_file, "rb") as f:
        body = f.read()
    with httpx.Client(http2=not http1, verify=context(ca)) as client:
        r = client.post(url + path, content=body, headers={"content-type": "application/json"})
    try:
        parsed = r.json()
    except ValueError:
        parsed = None
    out({"status": r.status_code, "http_version": r.http_version, "body": parsed,
         "content_type": r.headers.get("content-type")})


def raw(url, ca, path, text):
    import httpx

    with httpx.Client(http2=True, verify=context(ca)) as client:
        r = client.post(url + path, content=text.encode(), headers={"content-type": "application/json"})
    try:
        parsed = r.json()
    except ValueError:
        parsed = None
    out({"status": r.status_code, "body": parsed})


def get(url, ca, path):
    import httpx

    with httpx.Client(http2=True, verify=context(ca)) as client:
        r = client.get(url + path)
    out({"status": r.status_code, "text": r.text})


def apply(review_file, patch_b64, out_file):
    import jsonpatch

    with open(review_file) as f:
        rev = json.load(f)
    patch = json.loads(base64.b64decode(patch_b64))
    patched = jsonpatch.JsonPatch(patch).apply(rev["request"]["object"])
    rev["request"]["object"] = patched
    with open(out_file, "w") as f:
        json.dump(rev, f)
    out({"ops": len(patch), "object": patched})


def metrics(url, ca):
    import httpx
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    with httpx.Client(verify=context(ca)) as client:
        r = client.get(url + "/metrics")
    samples = []
    families = {}
    for family in text_string_to_metric_families(r.text):
        families[family.name] = family.type
        for s in family.samples:
            samples.append({"name": s.name, "labels": s.labels, "value": s.value})
    out({"status": r.status_code, "content_type": r.headers.get("content-type"),
         "families": families, "samples": samples})


def split(url):
    u = urllib.parse.urlparse(url)
    return u.hostname, u.port


def hammer(url, ca, body_file, seconds):
    """New connection (and handshake) per request, so a rotated certificate is seen at once."""
    with open(body_file, "rb") as f:
        body = f.read()
    host, port = split(url)
    ctx = context(ca)
    ok, failed, issuers, errors = 0, 0, {}, []
    end = time.time() + float(seconds)
    while time.time() < end:
        try:
            conn = http.client.HTTPSConnection(host, port, context=ctx, timeout=10)
            conn.connect()
            cert = conn.sock.getpeercert()
            issuer = dict(x[0] for x in cert["issuer"])["organizationName"]
            conn.request("POST", "/validate", body=body, headers={"content-type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            conn.close()
            if resp.status == 200:
                ok += 1
                issuers[issuer] = issuers.get(issuer, 0) + 1
            else:
                failed += 1
                errors.append(f"status {resp.status}")
        except Exception as e:  # every failure counts; the test asserts there are none
            failed += 1
            errors.append(repr(e))
    out({"ok": ok, "failed": failed, "issuers": issuers, "errors": errors[:5]})


def slow(url, ca, body_file):
    with open(body_file, "rb") as f:
        body = f.read()
    host, port = split(url)
    sock = context(ca).wrap_socket(socket.create_connection((host, port), timeout=30), server_hostname=host)
    head = (f"POST /validate HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    half = len(body) // 2
    sock.sendall(head + body[:half])
    out({"sent": "half"})
    sys.stdin.readline()
    sock.sendall(body[half:])
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    status_line = data.split(b"\r\n", 1)[0].decode(errors="replace")
    out({"status_line": status_line})


def idle(url, ca, n):
    host, port = split(url)
    ctx = context(ca)
    held = []
    socks = []
    for _ in range(int(n)):
        try:
            s = ctx.wrap_socket(socket.create_connection((host, port), timeout=5), server_hostname=host)
            socks.append(s)
            held.append(True)
        except Exception:
            held.append(False)
    out({"held": held})
    sys.stdin.readline()


def tls(url, ca, version):
    host, port = split(url)
    ctx = context(ca)
    v = {"1.1": ssl.TLSVersion.TLSv1_1, "1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}[version]
    try:
        # The client's own floor may forbid old versions; lower it so the server decides.
        ctx.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
        ctx.set_ciphers("ALL:@SECLEVEL=0")
        ctx.minimum_version = v
        ctx.maximum_version = v
    except (ValueError, ssl.SSLError) as e:
        out({"client_cannot": str(e)})
        return
    try:
        with ctx.wrap_socket(socket.create_connection((host, port), timeout=5), server_hostname=host) as s:
            out({"version": s.version(), "alpn": s.selected_alpn_protocol()})
    except Exception as e:
        out({"error": repr(e)})


def write_first(host, port, ctx, body, path="/validate"):
    """One HTTP/1.1 request written whole before anything is read, as a client without
    `Expect: 100-continue` sends it; returns (status, body) or raises what the socket raised."""
    sock = ctx.wrap_socket(socket.create_connection((host, port), timeout=30), server_hostname=host)
    try:
        head = (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        sock.sendall(head + body)
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            head_end = data.find(b"\r\n\r\n")
            if head_end >= 0:
                headers = data[:head_end].decode(errors="replace").lower()
                length = [int(line.split(":", 1)[1]) for line in headers.split("\r\n")
                          if line.startswith("content-length:")]
                if length and len(data) >= head_end + 4 + length[0]:
                    break
        status_line, _, rest = data.partition(b"\r\n")
        status = int(status_line.split()[1])
        return status, rest.partition(b"\r\n\r\n")[2].decode(errors="replace")
    finally:
        sock.close()


def write_first_cmd(url, ca, body_file):
    with open(body_file, "rb") as f:
        body = f.read()
    host, port = split(url)
    try:
        status, text = write_first(host, port, context(ca), body)
        out({"status": status, "body": text})
    except Exception as e:
        out({"error": repr(e)})


def soak(url, ca, valid_file, big_file, seconds):
    """Each round: a valid and an oversized review written first over HTTP/1.1, then a valid, an
    oversized and a valid review in turn over one HTTP/2 connection kept for the whole soak.
    Every valid review must get its 200 and every oversized one its 413."""
    import httpx

    with open(valid_file, "rb") as f:
        valid = f.read()
    with open(big_file, "rb") as f:
        big = f.read()
    host, port = split(url)
    ctx = context(ca)
    counts = {"valid_ok": 0, "valid_failed": 0, "big_413": 0, "big_failed": 0}
    errors = []

    def record(kind, ok, what):
        counts[f"{kind}_{'ok' if kind == 'valid' else '413'}" if ok else f"{kind}_failed"] += 1
        if not ok and len(errors) < 5:
            errors.append(what)

    end = time.time() + float(seconds)
    headers = {"content-type": "application/json"}
    with httpx.Client(http2=True, verify=ctx, timeout=20) as h2:
        while time.time() < end:
            for kind, body in (("valid", valid), ("big", big)):
                want = 200 if kind == "valid" else 413
                try:
                    status, _ = write_first(host, port, ctx, body)
                    record(kind, status == want, f"http/1.1 {kind}: status {status}")
                except Exception as e:
                    record(kind, False, f"http/1.1 {kind}: {e!r}")
            for kind, body in (("valid", valid), ("big", big), ("valid", valid)):
                want = 200 if kind == "valid" else 413
                try:
                    r = h2.post(url + "/validate", content=body, headers=headers)
                    ok = r.status_code == want and r.http_version == "HTTP/2"
                    record(kind, ok, f"http/2 {kind}: {r.http_version} {r.status_code}")
                except Exception as e:
                    record(kind, False, f"http/2 {kind}: {e!r}")
    out({**counts, "errors": errors})


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "review":
        review(args[0], args[1], args[2], args[3], http1="--http1" in args[4:])
    elif cmd == "raw":
        raw(*args[:4])
    elif cmd == "get":
        get(*args[:3])
    elif cmd == "apply":
        apply(*args[:3])
    elif cmd == "metrics":
        metrics(*args[:2])
    elif cmd == "hammer":
        hammer(*args[:4])
    elif cmd == "slow":
        slow(*args[:3])
    elif cmd == "idle":
        idle(*args[:3])
    elif cmd == "tls":
        tls(*args[:3])
    elif cmd == "write-first":
        write_first_cmd(*args[:3])
    elif cmd == "soak":
        soak(*args[:5])
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
