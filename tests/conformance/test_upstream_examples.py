"""Upstream's own example manifests are accepted by our CRDs and webhooks (DESIGN §6).

The corpus is ``shared/upstream-examples`` (manifests written by OpenKruise,
Kruise Rollouts and Argo Rollouts). Each one whose kind this product serves is
sent to the real API server as a server-side dry-run create.

Where the corpus README's static check shows what upstream's own API server does
with an example, ours must do the same: examples with schema findings (a missing
required field, a wrong type) are rejected, and the fields it lists as unknown are
pruned while everything else is kept. v1alpha1 Rollouts and BatchReleases go through
the manager's conversion webhook (``/convert``), as upstream's chart wires it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kruise.core.errors import ApiError, InvalidError
from kruise.core.kube import KubeClient, Resource
from kruise.rollouts.crds import ALL_CRDS
from kruise.rollouts.manager.process import ManagerProcess
from tests.conformance.upstream_readme import static_findings, without
from tests.support.cluster import TestCluster
from tests.support.compare import missing
from tests.support.corpus import UPSTREAM_EXAMPLES

CONVERTED = {("rollouts.kruise.io/v1alpha1", "Rollout"), ("rollouts.kruise.io/v1alpha1", "BatchRelease")}
"""Served, not stored: these need our conversion webhook to keep their v1alpha1-only fields."""
CORPUS = UPSTREAM_EXAMPLES
WEBHOOK_REJECTS = {
    **{f"kruise-rollouts/Rollout/00{i}-rollouts-demo.yaml": "replicas cannot be empty" for i in range(1, 6)},
    "kruise/ImagePullJob/002-job-with-always.yaml": (
        "can not set both names and labelSelector in this spec.selector"
    ),
}
"""Examples upstream's validating webhook rejects too: these five come from a design proposal
(``docs/proposals/20231107-v1beta1-apis.md``) that uses draft step fields (``trafficWeight``,
``desiredReplicas``) the API never had; the schema prunes them (the README lists them as unknown)
and Kruise Rollouts' webhook then denies the step without ``replicas``, with this message.
``002-job-with-always`` (the ImageListPullJob proposal) lacks the required ``completionPolicy``,
which OpenKruise's mutating webhook fills (Go's non-pointer struct marshals as
``{type: Always}``) before the schema sees it; its validating webhook then refuses ``names``
beside ``matchLabels`` (HTTP 400, as upstream's ``admission.Errored``)."""
WEBHOOK_REJECTS.update(
    {
        "kruise/ContainerRecreateRequest/001-xxx.yaml": "no found Pod named pod-name",
        "kruise/ContainerRecreateRequest/002-clone-foo-crflxhk4hn-khlxd-b1e8901771bc.yaml": (
            "no found Pod named clone-foo-crflxhk4hn-khlxd"
        ),
        "kruise/ContainerRecreateRequest/003-containerrecreaterequest-sample.yaml": (
            "podName can not be empty"
        ),
    }
)
"""A ContainerRecreateRequest names a pod of the namespace it is created in: upstream's mutating
webhook (which runs before the schema) refuses these three with HTTP 400, the proposals' two for
their pod missing and the sample for its empty spec."""
FINDINGS = static_findings(CORPUS / "README.md")
SERVED: dict[tuple[str, str], Resource] = {
    (f"{spec.group}/{v.name}", spec.kind): Resource(
        spec.group, v.name, spec.plural, spec.kind, spec.scope == "Namespaced"
    )
    for spec in ALL_CRDS
    for v in spec.versions
}


def _examples() -> list[Any]:
    if not CORPUS.is_dir():
        return [pytest.param(None, id="corpus-missing", marks=pytest.mark.skip(reason=f"{CORPUS} not found"))]
    params = []
    for path in sorted(CORPUS.rglob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if (doc.get("apiVersion"), doc.get("kind")) in SERVED:
            params.append(pytest.param(path, id=str(path.relative_to(CORPUS))))
    return params


@pytest.fixture(scope="module")
def converting(cluster: TestCluster, manager: ManagerProcess) -> bool:
    """The manager serves ``/convert`` and points the Rollout/BatchRelease CRDs at it.

    True when the API server can reach it: the manager listens on loopback, which only the
    embedded API server reaches.
    """
    return cluster.local is not None


@pytest.mark.parametrize("path", _examples())
async def test_upstream_example_is_accepted(
    kube: KubeClient, namespace: str, converting: bool, path: Path
) -> None:
    doc = yaml.safe_load(path.read_text())
    if (doc["apiVersion"], doc["kind"]) in CONVERTED and not converting:
        pytest.skip("v1alpha1 needs the conversion webhook, which this API server cannot reach")
    res = SERVED[(doc["apiVersion"], doc["kind"])]
    doc["metadata"].pop("namespace", None)
    expected_denial = WEBHOOK_REJECTS.get(str(path.relative_to(CORPUS)))
    if expected_denial is not None:
        with pytest.raises(ApiError) as denied:  # 422 (InvalidError) or a webhook's own code
            await kube.create(res, doc, namespace if res.namespaced else None, dry_run=True)
        assert expected_denial in str(denied.value)
        return
    findings = FINDINGS.get(str(path.relative_to(CORPUS)))
    if findings is not None and findings.schema:
        # upstream's own CRD rejects this example; so does ours, for the same fields
        with pytest.raises(InvalidError) as err:
            await kube.create(res, doc, namespace if res.namespaced else None, dry_run=True)
        for message in findings.required_errors():
            assert message in str(err.value)
        return
    created = await kube.create(res, doc, namespace if res.namespaced else None, dry_run=True)
    assert created["metadata"]["name"] == doc["metadata"]["name"]
    # nothing the example sets is pruned (no field is unknown to our schema) except what
    # upstream's schema does not know either
    unknown = findings.unknown if findings is not None else ()
    assert missing(without(doc, unknown)["spec"], created["spec"]) == []
    assert without(created, unknown) == created, f"{unknown} should have been pruned"
