"""Fixtures of the Helm chart tests: helm, a private control plane, and the chart applied to it.

The chart is installed into a control plane of its own (started in ~5 s), not the session's:
the manager run there with the chart's ServiceAccount must be the only controller acting on
its CloneSets and Rollouts, and the webhook configurations and CRD conversion webhooks it
writes at start must not replace those of the session's ``manager`` fixture. Both live for this
package's tests only.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.binaries import BinariesMissingError, find_bin_dir
from tests.integration.chart.support import CHART, JSON, NS, REPO, find, helm_run, values_file
from tests.support.cluster import TestCluster

THIRD_PARTY_CRDS = REPO / "hack" / "crds"


@pytest.fixture(scope="session")
def helm() -> str:
    """Path of helm (built by ``hack/build-tools.sh`` beside the control-plane binaries)."""
    try:
        path = find_bin_dir() / "helm"
    except BinariesMissingError as err:
        pytest.skip(str(err))
    if not path.exists():
        found = shutil.which("helm")
        if found is None:
            pytest.skip(f"helm not found in {path.parent}; run `make tools`")
        return found
    return str(path)


@pytest.fixture(scope="package")
def chart_cluster() -> Iterator[TestCluster]:
    """A fresh local control plane (2 KWOK nodes, Gateway API CRDs) for the chart tests only."""
    tmp = Path(tempfile.mkdtemp(prefix="kruise-chart-"))
    local = LocalCluster(tmp / "cluster", nodes=2, attached=True)
    state = local.start([THIRD_PARTY_CRDS / "gateway-api-standard-install.yaml"])
    try:
        yield TestCluster(
            kubeconfig=state.kubeconfig, kubectl=str(Path(state.bin_dir) / "kubectl"), local=local
        )
    finally:
        local.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="package")
def installed(helm: str, chart_cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory) -> JSON:
    """``helm template`` (CRDs included, daemon on) applied to ``chart_cluster``: dry run, then for real.

    Returns the rendered objects (``install``), the pre-delete hook's (``hooks``: ``helm install``
    does not create them, but they must be accepted too) and kubectl's reports (``dry``, ``applied``).
    """
    tmp = tmp_path_factory.mktemp("chart")
    values = values_file(tmp, {"daemon": {"enabled": True}})
    out = helm_run(helm, "template", "kruise", str(CHART), "-f", str(values), "--include-crds", "--no-hooks")
    assert out.returncode == 0, out.stderr
    manifest = tmp / "kruise.yaml"
    manifest.write_text(out.stdout)
    hooks_out = helm_run(
        helm, "template", "kruise", str(CHART), "--show-only", "templates/pre_delete_hook.yaml"
    )
    assert hooks_out.returncode == 0, hooks_out.stderr
    hooks = tmp / "hooks.yaml"
    hooks.write_text(hooks_out.stdout)
    install = [d for d in yaml.safe_load_all(out.stdout) if d]

    def apply(path: Path, *extra: str) -> str:
        done = chart_cluster.kubectl(
            "apply", "--server-side", "--field-manager=helm", *extra, "-f", str(path)
        )
        return done.stdout

    # The namespace first: a server-side dry run of namespaced objects needs it to exist.
    namespace = tmp / "namespace.yaml"
    namespace.write_text(yaml.safe_dump(find(install, "Namespace", NS)))
    apply(namespace, "--dry-run=server")
    apply(namespace)
    dry = apply(manifest, "--dry-run=server") + apply(hooks, "--dry-run=server")
    applied = apply(manifest)
    chart_cluster.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
    return {
        "install": install,
        "hooks": [d for d in yaml.safe_load_all(hooks_out.stdout) if d],
        "dry": dry,
        "applied": applied,
    }
