"""Helpers of the Helm chart tests: render ``charts/kruise``, pick objects, talk as a ServiceAccount."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.cluster import TestCluster

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "charts" / "kruise"
NS = "kruise-system"
JSON = dict[str, Any]


def helm_run(helm: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm, *args], capture_output=True, text=True, timeout=120)


def values_file(tmp_path: Path, values: JSON, name: str = "values.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(values))
    return path


def render(helm: str, *args: str, values: Path | None = None) -> list[JSON]:
    """``helm template kruise charts/kruise`` as a list of objects."""
    extra = ["-f", str(values)] if values else []
    out = helm_run(helm, "template", "kruise", str(CHART), *extra, *args)
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def find(docs: list[JSON], kind: str, name: str) -> JSON:
    hits = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(hits) == 1, f"{kind}/{name}: {len(hits)} rendered"
    return hits[0]


def kinds(docs: list[JSON]) -> set[tuple[str, str]]:
    return {(d["kind"], d["metadata"]["name"]) for d in docs}


def manager_args(docs: list[JSON]) -> list[str]:
    container = find(docs, "Deployment", "kruise-controller-manager")["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["name"] == "manager"
    return list(container["args"])


def flag_map(args: list[str]) -> dict[str, str]:
    return dict(a.split("=", 1) if "=" in a else (a, "") for a in args if a.startswith("--"))


def reported(output: str, verb: str) -> set[tuple[str, str]]:
    """(kind, name) of every ``<kind>[.<group>]/<name> <verb>`` line kubectl printed."""
    found = set()
    for line in output.splitlines():
        ref, _, rest = line.partition(" ")
        if rest.strip() == verb:
            kind_group, _, name = ref.partition("/")
            found.add((kind_group.split(".")[0], name))
    return found


def token_kubeconfig(cluster: TestCluster, token: str, path: Path) -> Path:
    """A kubeconfig for the cluster of ``cluster.kubeconfig`` that authenticates with ``token``."""
    admin = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    current = next(c for c in admin["contexts"] if c["name"] == admin["current-context"])
    server = next(c for c in admin["clusters"] if c["name"] == current["context"]["cluster"])
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "chart", "cluster": server["cluster"]}],
        "users": [{"name": "kruise-manager", "user": {"token": token}}],
        "contexts": [{"name": "chart", "context": {"cluster": "chart", "user": "kruise-manager"}}],
        "current-context": "chart",
    }
    path.write_text(yaml.safe_dump(config))
    return path
