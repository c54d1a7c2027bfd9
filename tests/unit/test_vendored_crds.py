"""The third-party CRDs vendored in ``hack/crds`` are upstream's files, unchanged, with their licence.

A clean clone needs them (tests, ``make demo``, the README walkthrough); the provenance and
checksums are listed in ``hack/crds/README.md``, and this test keeps the list honest.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml

CRDS = Path(__file__).resolve().parents[2] / "hack" / "crds"


def test_every_vendored_file_matches_the_checksum_in_the_readme() -> None:
    readme = (CRDS / "README.md").read_text()
    listed = dict(re.findall(r"\| `([\w.-]+\.yaml)` \|[^|]*\| `([0-9a-f]{64})` \|", readme))
    files = {p.name for p in CRDS.glob("*.yaml")}
    assert set(listed) == files == {"gateway-api-standard-install.yaml", "istio-networking.yaml"}
    for name, digest in listed.items():
        assert hashlib.sha256((CRDS / name).read_bytes()).hexdigest() == digest, name


def test_the_licence_is_apache_2() -> None:
    assert "Apache License" in (CRDS / "LICENSE").read_text()
    assert "Version 2.0" in (CRDS / "LICENSE").read_text()


def test_the_kinds_the_routers_edit_are_there() -> None:
    names = {
        doc["metadata"]["name"]
        for path in CRDS.glob("*.yaml")
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc.get("kind") == "CustomResourceDefinition"
    }
    assert {
        "httproutes.gateway.networking.k8s.io",
        "virtualservices.networking.istio.io",
        "destinationrules.networking.istio.io",
    } <= names
