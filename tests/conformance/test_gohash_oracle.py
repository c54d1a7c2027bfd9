"""The Python ComputeHash port equals Go's on every template of the corpus (``gohash_corpus``).

``hack/gohash`` is built twice, with the ``k8s.io/api`` Kruise Rollouts pins (v0.28.9, its
``canaryRevision``) and with kube-controller-manager 1.37.2's (v0.37.2); ``gohash hash`` decodes
each template with ``encoding/json`` and runs ``ComputeHash`` as upstream does. The vendored type
schemas must be exactly what ``gohash schema`` prints. Go comes with ``make tools``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kruise.rollouts.workloads.deployment.gohash import (
    KCM_K8S_API,
    ROLLOUTS_K8S_API,
    compute_hash,
    template_text,
)
from tests.conformance.gohash_corpus import templates

ROOT = Path(__file__).resolve().parents[2]
HACK = ROOT / "hack" / "gohash"
SCHEMAS = ROOT / "rollouts" / "kruise" / "rollouts" / "workloads" / "deployment" / "gohash"
VERSIONS = [ROLLOUTS_K8S_API, KCM_K8S_API]
GO_ENV = {"GOWORK": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}


@pytest.fixture(scope="module")
def gohash(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("gohash")
    binaries = {}
    for version in VERSIONS:
        modfile = [] if version == ROLLOUTS_K8S_API else [f"-modfile=go.{version}.mod"]
        binary = out / f"gohash-{version}"
        subprocess.run(
            ["go", "build", "-p", "1", *modfile, "-o", str(binary), "."],
            cwd=HACK,
            env={**os.environ, **GO_ENV},
            check=True,
        )
        binaries[version] = binary
    return binaries


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("corpus")
    files = {}
    for name, template in templates().items():
        files[name] = out / f"{name}.json"
        files[name].write_text(json.dumps(template))
    return files


@pytest.mark.parametrize("version", VERSIONS)
def test_vendored_schema_is_what_the_generator_prints(gohash: dict[str, Path], version: str) -> None:
    generated = subprocess.run([gohash[version], "schema"], check=True, capture_output=True, text=True).stdout
    assert (SCHEMAS / f"k8s-api-{version}.json").read_text() == generated


@pytest.mark.parametrize("version", VERSIONS)
def test_port_equals_go_on_the_corpus(gohash: dict[str, Path], corpus: dict[str, Path], version: str) -> None:
    names = sorted(corpus)
    result = subprocess.run(
        [gohash[version], "hash", *(str(corpus[n]) for n in names)],
        check=True,
        capture_output=True,
        text=True,
    )
    go = dict(zip(names, result.stdout.split(), strict=True))
    ours = {n: compute_hash(json.loads(corpus[n].read_text()), version=version) for n in names}
    wrong = sorted(n for n in names if ours[n] != go[n])
    for name in wrong[:1]:  # the first difference of spew's text, to see what the port got wrong
        text = subprocess.run(
            [gohash[version], "text", str(corpus[name])], check=True, capture_output=True, text=True
        )
        mine = template_text(json.loads(corpus[name].read_text()), version) + "\n"
        at = next((i for i, (a, b) in enumerate(zip(text.stdout, mine, strict=False)) if a != b), len(mine))
        go_text, our_text = text.stdout[at - 200 : at + 200], mine[at - 200 : at + 200]
        pytest.fail(f"{wrong} differ; {name}: go {go_text!r}\n   ours {our_text!r}")
    assert len(names) >= 75
