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
    unrouted URL CA BODYFILE N              N bodies each to a wrong path and with a wrong method,
                                            over HTTP/2 and HTTP/1.1; what became of each
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


def write_first(host, port, ctx, body, path="/validate", method="POST"):
    """One HTTP/1.1 request written whole before anything is read, as a client without
    `Expect: 100-continue` sends it; returns (status, body) or raises what the socket raised."""
    sock = ctx.wrap_socket(socket.create_connection((host, port), timeout=30), server_hostname=host)
    try:
        head = (f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
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


class H2Client:
    """One HTTP/2 connection driven frame by frame with PyPI `h2` (the library under httpx's
    HTTP/2), which reports every RST_STREAM the server sends. httpx hides a reset that follows a
    complete response; curl, like other clients that read while they upload, fails on it."""

    def __init__(self, host, port, ctx):
        import h2.config
        import h2.connection

        ctx.set_alpn_protocols(["h2"])
        self.authority = f"{host}:{port}"
        raw = socket.create_connection((host, port), timeout=20)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = ctx.wrap_socket(raw, server_hostname=host)
        if self.sock.selected_alpn_protocol() != "h2":
            raise RuntimeError(f"ALPN chose {self.sock.selected_alpn_protocol()}, not h2")
        self.conn = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.streams = {}
        self.pong = False
        self.flush()

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def pump(self, block):
        """Handles the frames that have arrived; waits for some when `block`."""
        import h2.events

        self.sock.settimeout(20 if block else 0)
        try:
            data = self.sock.recv(65536)
        except (ssl.SSLWantReadError, BlockingIOError):
            return
        finally:
            self.sock.settimeout(20)
        if not data:
            raise ConnectionError("the server closed the connection")
        for ev in self.conn.receive_data(data):
            stream = self.streams.get(getattr(ev, "stream_id", None))
            if isinstance(ev, h2.events.ResponseReceived):
                stream["status"] = int(dict(ev.headers)[":status"])
            elif isinstance(ev, h2.events.DataReceived):
                self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                stream["ended"] = True
            elif isinstance(ev, h2.events.StreamReset) and stream is not None:
                stream["reset"] = ev.error_code
            elif isinstance(ev, h2.events.PingAckReceived):
                self.pong = True
        self.flush()

    def request(self, method, path, body):
        """Sends a request, reading what arrives between frames as a client that uploads and
        reads at once does; returns its stream's record (status, ended, reset)."""
        import h2.exceptions

        sid = self.conn.get_next_available_stream_id()
        stream = self.streams[sid] = {"status": None, "ended": False, "reset": None}
        self.conn.send_headers(sid, [(":method", method), (":path", path), (":scheme", "https"),
                                     (":authority", self.authority),
                                     ("content-length", str(len(body)))])
        # The body follows a PING round trip, as an upload that starts a moment after its headers
        # does: a server that answers without reading the body has answered by then.
        self.settle()
        sent = 0
        while sent < len(body) and stream["reset"] is None:
            room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
            if room == 0:
                self.pump(block=True)
                continue
            chunk = body[sent:sent + room]
            try:
                self.conn.send_data(sid, chunk, end_stream=sent + len(chunk) == len(body))
            except h2.exceptions.StreamClosedError:
                break
            sent += len(chunk)
            self.flush()
            self.pump(block=False)
        while not stream["ended"] and stream["reset"] is None:
            self.pump(block=True)
        return stream

    def settle(self):
        """A PING round trip, so that resets sent after a response's last frame are seen."""
        self.pong = False
        self.conn.ping(b"winguard")
        self.flush()
        while not self.pong:
            self.pump(block=True)

    def close(self):
        self.conn.close_connection()
        self.flush()
        self.sock.close()


def unrouted(url, ca, body_file, n):
    """N requests with a body to a path that does not exist (POST /nope) and N with a method the
    path does not take (PUT /validate), over one HTTP/2 connection and over HTTP/1.1 written whole
    first. Every one must end with its 404 or 405: none may be cut off by a stream or connection
    reset. Outcomes are counted as "VERSION METHOD PATH: STATUS" (or the reset or error)."""
    with open(body_file, "rb") as f:
        body = f.read()
    host, port = split(url)
    ctx = context(ca)
    cases = (("POST", "/nope"), ("PUT", "/validate"))
    outcomes = {}

    def record(key):
        outcomes[key] = outcomes.get(key, 0) + 1

    try:
        h2 = H2Client(host, port, context(ca))
        sent = [(method, path, h2.request(method, path, body))
                for _ in range(int(n)) for method, path in cases]
        h2.settle()
        h2.close()
        for method, path, stream in sent:
            if stream["reset"] is not None:
                record(f"HTTP/2 {method} {path}: reset {stream['reset']!r} after {stream['status']}")
            else:
                record(f"HTTP/2 {method} {path}: {stream['status']}")
    except Exception as e:
        record(f"HTTP/2: {e!r}")
    for _ in range(max(1, int(n) // 10)):
        for method, path in cases:
            try:
                status, _ = write_first(host, port, ctx, body, path, method)
                record(f"HTTP/1.1 {method} {path}: {status}")
            except Exception as e:
                record(f"HTTP/1.1 {method} {path}: {type(e).__name__}")
    out({"outcomes": outcomes})


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
    elif cmd == "unrouted":
        unrouted(*args[:4])
    elif cmd == "soak":
        soak(*args[:5])
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
