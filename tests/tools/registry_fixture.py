#!/usr/bin/env python3
"""What tests/registry.rs needs around a real registry (Debian's docker-registry, the CNCF
distribution registry): a test CA and a certificate for 127.0.0.1, an htpasswd file, and images
pushed through the registry's HTTP API, written here by hand so the pushes don't share code with
winguard's reader.

    registry_fixture.py certs DIR            ca.pem, server.pem, server-key.pem (trustme)
    registry_fixture.py htpasswd FILE USER PASSWORD
    registry_fixture.py push BASE_URL [--ca FILE] [--user USER --password PASSWORD]

`push` pushes the images below and prints a JSON object: each pushed reference (`repo:tag`)
→ the digest of the manifest or index its tag names.
"""

import base64
import hashlib
import json
import ssl
import sys
import urllib.error
import urllib.request
from pathlib import Path

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

    def request(self, method, url, body=None, headers=None):
        if not url.startswith("http"):
            url = self.base + url
        req = urllib.request.Request(url, data=body, method=method, headers=dict(headers or {}))
        if self.auth:
            req.add_header("Authorization", self.auth)
        try:
            with urllib.request.urlopen(req, context=self.context) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            raise SystemExit(f"{method} {url}: {e.code} {e.read().decode(errors='replace')}")

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
            entry = registry.image(repo, os, arch, version, docker=docker)
            platform = {"architecture": arch, "os": os}
            if version:
                platform["os.version"] = version
            entries.append({**entry, "platform": platform})
        index = {"schemaVersion": 2, "mediaType": DOCKER_LIST if docker else OCI_INDEX,
                 "manifests": entries}
        digests[ref] = registry.manifest(repo, tag, index["mediaType"], index)["digest"]
    print(json.dumps(digests))


def main(argv):
    if argv[:1] == ["certs"] and len(argv) == 2:
        certs(argv[1])
    elif argv[:1] == ["htpasswd"] and len(argv) == 4:
        htpasswd(*argv[1:])
    elif argv[:1] == ["push"] and len(argv) >= 2:
        options = dict(zip(argv[2::2], argv[3::2]))
        push(argv[1], options.get("--ca"), options.get("--user"), options.get("--password"))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
