#!/usr/bin/env python3
"""Writes the pre-commit mirror into DEST with `winguard` pinned to VERSION.

    python3 packaging/pre-commit/pin.py VERSION DEST

Copies .pre-commit-hooks.yaml, pyproject.toml and README.md from this directory, with the
mirror's own version and its `winguard==` requirement set to VERSION. The release workflow runs
it into a clone of the mirror repository; tests/release.rs runs it into a scratch repository.
"""

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = [".pre-commit-hooks.yaml", "pyproject.toml", "README.md"]


def main():
    if len(sys.argv) != 3 or not re.fullmatch(r"\d+\.\d+\.\d+([-.+][0-9A-Za-z.]+)?", sys.argv[1]):
        sys.exit("usage: pin.py VERSION DEST (VERSION as 1.2.3)")
    version, dest = sys.argv[1], Path(sys.argv[2])
    dest.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        text = (HERE / name).read_text()
        if name == "pyproject.toml":
            text = re.sub(r'(?m)^version = "[^"]*"', f'version = "{version}"', text)
            text = re.sub(r'"winguard==[^"]*"', f'"winguard=={version}"', text)
        elif name == "README.md":
            text = re.sub(r"rev: v\S+", f"rev: v{version}", text)
        (dest / name).write_text(text)


if __name__ == "__main__":
    main()
