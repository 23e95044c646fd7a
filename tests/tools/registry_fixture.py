#!/usr/bin/env python3
"""What tests/registry.rs needs around a real registry (Debian's docker-registry, the CNCF
distribution registry): a test CA and a certificate for 127.0.0.1, an htpasswd file, and images
pushed through the registry's HTTP API, written here by hand so the pushes don't share code with
winguard's reader.

    registry_fixture.py certs DIR            ca.pem, server.pem, server-key.pem (trustme)
    registry_fixture.py htpasswd FILE USER PASSWORD
    registry_fixture.py push BASE_URL [--ca FILE] [--user USER --password PASSWORD]
    registry_fixture.py token-server PORT CERTS_DIR LOG

`push` pushes the images below and prints a JSON object: each pushed reference (`repo:tag`)
→ the digest of the manifest or index its tag names. When the registry asks for a bearer token,
`push` gets one from the realm its challenge names, as a registry client does.

`token-server` is the token service of the distribution registry's token auth, for anyone: on
127.0.0.1:PORT it grants every scope asked for, in a JWT signed with the test certificate
(`server.pem`, ES256, the certificate in `x5c`; the registry trusts the test CA), and appends
each scope asked for to LOG.
"""

import base64
import hashlib
import json
import re
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

TOKEN_ISSUER = "winguard-test-issuer"

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"

WS2019 = "10.0.17763.6414"
WS2022 = "10.0.20348.2700"

# repo:tag → (kind, platforms); a platform is (os, architecture, os.version or None).
IMAGES = {
    # An application image built for Windows Server 2019 only, under a tag that says nothing.
    "contoso/orders:1.4": ("oci-index", [("windows", "amd64", WS2019)]),
    # A Linux-only agent: one image manifest, no index (its platform is in its config).
    "contoso/log-agent:2.1": ("oci-image", [("linux", "amd64", None)]),
    # A tool published for Linux and both Windows builds, with a build attestation entry.
    "contoso/tools:3": (
        "oci-index",
        [("linux", "amd64", None), ("windows", "amd64", WS2019), ("windows", "amd64", WS2022),
         ("unknown", "unknown", None)],
    ),
    # A Windows Server 2022 image as Docker's own manifest list.
    "contoso/win2022:1": ("docker-list", [("windows", "amd64", WS2022)]),
    # An index with an entry that names no platform: its platforms are not known.
    "contoso/unlabelled:1": ("oci-index", [("linux", "amd64", None), (None, None, None)]),
}


def certs(folder):
    import trustme

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    server.private_key_pem.write_to_path(str(folder / "server-key.pem"))
    with open(folder / "server.pem", "wb") as f:
        for blob in server.cert_chain_pems:
            f.write(blob.bytes())


def htpasswd(file, user, password):
    import bcrypt

    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=5)).decode()
    Path(file).write_text(f"{user}:{hashed}\n")


class Registry:
    def __init__(self, base, ca=None, user=None, password=None):
        self.base = base.rstrip("/")
        self.context = ssl.create_default_context(cafile=ca) if ca else None
        self.auth = None
        if user is not None:
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            self.auth = f"Basic {token}"

    def request(self, method, url, body=None, headers=None, retried=False):
        if not url.startswith("http"):
            url = self.base + url
        req = urllib.request.Request(url, data=body, method=method, headers=dict(headers or {}))
        if self.auth:
            req.add_header("Authorization", self.auth)
        try:
            with urllib.request.urlopen(req, context=self.context) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            challenge = e.headers.get("WWW-Authenticate", "")
            if e.code == 401 and challenge.startswith("Bearer ") and not retried:
                self.auth = "Bearer " + self.token(challenge)
                return self.request(method, url, body, headers, retried=True)
            raise SystemExit(f"{method} {url}: {e.code} {e.read().decode(errors='replace')}")

    def token(self, challenge):
        """A token from the realm a `Bearer realm=…,service=…,scope=…` challenge names."""
        params = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
        query = {"service": params.get("service", "")}
        if "scope" in params:
            query["scope"] = params["scope"]
        url = params["realm"] + "?" + urllib.parse.urlencode(query)
        with urllib.request.urlopen(url, context=self.context) as resp:
            return json.load(resp)["token"]

    def blob(self, repo, data):
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        _, headers, _ = self.request("POST", f"/v2/{repo}/blobs/uploads/")
        location = headers["Location"]
        sep = "&" if "?" in location else "?"
        if not location.startswith("http"):
            location = self.base + location
        self.request("PUT", f"{location}{sep}digest={digest}", data,
                     {"Content-Type": "application/octet-stream"})
        return {"digest": digest, "size": len(data)}

    def manifest(self, repo, reference, media_type, document):
        data = json.dumps(document, indent=2).encode()
        self.request("PUT", f"/v2/{repo}/manifests/{reference}", data,
                     {"Content-Type": media_type})
        return {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                "size": len(data)}

    def image(self, repo, os, arch, version, docker=False, reference=None):
        """One image's manifest (pushed by digest unless `reference` names a tag)."""
        layer = self.blob(repo, f"layer of {repo} for {os}/{arch} {version}".encode())
        config = {"architecture": arch, "os": os,
                  "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]}}
        if version:
            config["os.version"] = version
        config_ref = self.blob(repo, json.dumps(config).encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": DOCKER_MANIFEST if docker else OCI_MANIFEST,
            "config": {"mediaType": DOCKER_CONFIG if docker else OCI_CONFIG, **config_ref},
            "layers": [{"mediaType": DOCKER_LAYER if docker else OCI_LAYER, **layer}],
        }
        pushed_as = reference or "sha256:" + hashlib.sha256(
            json.dumps(manifest, indent=2).encode()).hexdigest()
        return self.manifest(repo, pushed_as, manifest["mediaType"], manifest)


def push(base, ca=None, user=None, password=None):
    registry = Registry(base, ca, user, password)
    digests = {}
    for ref, (kind, platforms) in IMAGES.items():
        repo, tag = ref.rsplit(":", 1)
        if kind == "oci-image":
            (os, arch, version), = platforms
            digests[ref] = registry.image(repo, os, arch, version, reference=tag)["digest"]
            continue
        docker = kind == "docker-list"
        entries = []
        for os, arch, version in platforms:
            if os is None:
                entries.append(registry.image(repo, "windows", "amd64", WS2022, docker=docker))
                continue
            entry = registry.image(repo, os, arch, version, docker=docker)
            platform = {"architecture": arch, "os": os}
            if version:
                platform["os.version"] = version
            entries.append({**entry, "platform": platform})
        index = {"schemaVersion": 2, "mediaType": DOCKER_LIST if docker else OCI_INDEX,
                 "manifests": entries}
        digests[ref] = registry.manifest(repo, tag, index["mediaType"], index)["digest"]
    print(json.dumps(digests))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token_server(port, certs_dir, log):
    """Grants every scope asked for (the registry's token auth, for tests)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    certs_dir = Path(certs_dir)
    key = serialization.load_pem_private_key((certs_dir / "server-key.pem").read_bytes(), None)
    cert = x509.load_pem_x509_certificates((certs_dir / "server.pem").read_bytes())[0]
    x5c = [base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()]

    def sign(claims):
        header = {"typ": "JWT", "alg": "ES256", "x5c": x5c}
        signing_input = (b64url(json.dumps(header).encode()) + "."
                         + b64url(json.dumps(claims).encode()))
        r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            url = urllib.parse.urlparse(self.path)
            query = urllib.parse.parse_qs(url.query)
            access = []
            for scope in query.get("scope", []):
                with open(log, "a") as f:
                    f.write(scope + "\n")
                kind, name, actions = scope.split(":")
                access.append({"type": kind, "name": name, "actions": actions.split(",")})
            now = int(time.time())
            token = sign({"iss": TOKEN_ISSUER, "sub": "", "aud": query.get("service", [""])[0],
                          "exp": now + 300, "nbf": now - 10, "iat": now,
                          "jti": str(time.monotonic_ns()), "access": access})
            body = json.dumps({"token": token, "access_token": token, "expires_in": 300}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", int(port)), Handler).serve_forever()


def main(argv):
    if argv[:1] == ["certs"] and len(argv) == 2:
        certs(argv[1])
    elif argv[:1] == ["htpasswd"] and len(argv) == 4:
        htpasswd(*argv[1:])
    elif argv[:1] == ["token-server"] and len(argv) == 4:
        token_server(*argv[1:])
    elif argv[:1] == ["push"] and len(argv) >= 2:
        options = dict(zip(argv[2::2], argv[3::2]))
        push(argv[1], options.get("--ca"), options.get("--user"), options.get("--password"))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
