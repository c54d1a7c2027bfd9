"""Deletion protection with ``ResourcesDeletionProtection`` and
``DeletionProtectionForCRDCascadingGate`` on (both off by default, so a replica of the manager
with them replaces the session's): upstream's e2e ``test/e2e/policy/v1alpha1/deletionprotection.go``
one test per ``It``, plus a ``Cascading`` namespace with running pods refused with upstream's
exact message, nothing deleted, and an unlabelled object never reaching the webhook."""

from __future__ import annotations

import copy
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kruise.core.errors import ApiError, NotFoundError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import (
    CLONESETS,
    CRDS,
    DEPLOYMENTS,
    INGRESSES,
    NAMESPACES,
    PODS,
    PVCS,
    SERVICES,
    Resource,
)
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.cloneset.helpers import new_cloneset
from tests.support.cluster import TestCluster
from tests.support.managers import own_replica
from tests.support.wait import eventually

KEY = "policy.kruise.io/delete-protection"
FORBIDDEN = "forbidden by ResourcesProtectionDeletion"


@pytest.fixture(scope="module")
async def gated(
    manager: ManagerProcess, cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ManagerProcess]:
    gates = ("--feature-gates=ResourcesDeletionProtection=true,DeletionProtectionForCRDCascadingGate=true",)
    async with own_replica(manager, cluster, tmp_path_factory.mktemp("protection"), extra_args=gates) as own:
        yield own


pytestmark = pytest.mark.usefixtures("gated")


async def refused(call: Any) -> str:
    """The webhook's 403 message of a refused delete (after the API server's prefix)."""
    with pytest.raises(ApiError) as err:
        await call
    assert err.value.status == 403, err.value
    prefix, _, message = err.value.message.partition(" denied the request: ")
    assert prefix.startswith("admission webhook "), err.value.message
    return message


async def label(
    kube: KubeClient, res: Resource, name: str, value: str | None, namespace: str | None = None
) -> None:
    await kube.patch(res, name, {"metadata": {"labels": {KEY: value}}}, namespace)


async def scale(kube: KubeClient, res: Resource, name: str, namespace: str, replicas: int) -> None:
    await kube.patch(res, name, {"spec": {"replicas": replicas}}, namespace)

    async def settled() -> bool:
        return (await kube.get(res, name, namespace)).get("status", {}).get("replicas", 0) == replicas

    await eventually(settled, timeout=60, what=f"{name} at {replicas} replicas")
    await eventually(lambda: _no_pods(kube, namespace), timeout=60, what="no pods left")


@pytest.fixture
async def own_namespace(kube: KubeClient) -> AsyncIterator[str]:
    name = f"dp-{uuid.uuid4().hex[:8]}"
    await kube.create(NAMESPACES, {"metadata": {"name": name, "labels": {KEY: "Always"}}})
    try:
        yield name
    finally:
        await label(kube, NAMESPACES, name, None)
        await kube.delete(NAMESPACES, name, missing_ok=True)


async def test_ns_should_be_protected(kube: KubeClient, own_namespace: str) -> None:
    ns = own_namespace
    assert await refused(kube.delete(NAMESPACES, ns)) == f"{FORBIDDEN} for {KEY}=Always"
    await kube.create(CLONESETS, copy.deepcopy(new_cloneset("web", 1)), ns)
    await eventually(lambda: _pods(kube, ns), timeout=60, what="a pod")
    await label(kube, NAMESPACES, ns, "Cascading")
    assert (
        await refused(kube.delete(NAMESPACES, ns)) == f"{FORBIDDEN} for {KEY}=Cascading and active pods 1>0"
    )
    await scale(kube, CLONESETS, "web", ns, 0)
    pvc = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "50Mi"}}},
    }
    await kube.create(PVCS, pvc, ns)
    await eventually(lambda: _bound(kube, ns), timeout=60, what="the claim bound")
    assert (
        await refused(kube.delete(NAMESPACES, ns))
        == f'{FORBIDDEN} for {KEY}=Cascading and "Bound" status pvc 1>0'
    )
    await kube.delete(PVCS, "data", ns)
    await eventually(lambda: _no_claims(kube, ns), timeout=60, what="the claim gone")
    await kube.delete(NAMESPACES, ns)


async def test_cascading_namespace_with_running_pods_is_refused_and_nothing_deleted(
    kube: KubeClient, own_namespace: str
) -> None:
    ns = own_namespace
    await label(kube, NAMESPACES, ns, "Cascading")
    await kube.create(CLONESETS, copy.deepcopy(new_cloneset("web", 2)), ns)
    await eventually(lambda: _pods(kube, ns, 2), timeout=60, what="two pods")
    message = await refused(kube.delete(NAMESPACES, ns))
    assert message == (
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading "
        "and active pods 2>0"
    )
    live = await kube.get(NAMESPACES, ns)
    assert "deletionTimestamp" not in live["metadata"] and live["status"]["phase"] == "Active"
    assert len(await _pods(kube, ns, 2)) == 2
    assert (await kube.get(CLONESETS, "web", ns))["spec"]["replicas"] == 2


async def test_should_be_protected_crd(kube: KubeClient, namespace: str) -> None:
    """upstream: ``CRD deletion > should be protected``."""
    group = f"e2e{uuid.uuid4().hex[:6]}.kruise.io"
    name = f"testdeletioncases.{group}"
    schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
        },
    }
    crd = {
        "metadata": {"name": name, "labels": {KEY: "Always"}},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": "testdeletioncases",
                "singular": "testdeletioncase",
                "kind": "TestDeletionCase",
            },
            "versions": [
                {"name": "v1beta1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
            ],
        },
    }
    await kube.create(CRDS, crd)
    try:
        assert await refused(kube.delete(CRDS, name)) == f"{FORBIDDEN} for {KEY}=Always"
        cases = Resource(group, "v1beta1", "testdeletioncases", "TestDeletionCase")

        async def create_cr() -> bool:
            try:
                await kube.create(
                    cases,
                    {
                        "apiVersion": f"{group}/v1beta1",
                        "kind": "TestDeletionCase",
                        "metadata": {"name": "cr"},
                    },
                    namespace,
                )
            except NotFoundError:
                return False  # the CRD is not served yet
            return True

        await eventually(create_cr, what="the CR created")
        await label(kube, CRDS, name, "Cascading")
        assert await refused(kube.delete(CRDS, name)) == f"{FORBIDDEN} for {KEY}=Cascading and active CRs 1>0"
        await kube.delete(cases, "cr", namespace)
        await eventually(lambda: _gone(kube, cases, "cr", namespace), what="the CR gone")
        await kube.delete(CRDS, name)
    finally:
        await label(kube, CRDS, name, None) if await kube.get_or_none(CRDS, name) else None
        await kube.delete(CRDS, name, missing_ok=True)


async def test_cloneset_should_be_protected(kube: KubeClient, namespace: str) -> None:
    cs = copy.deepcopy(new_cloneset("web", 0))
    cs["metadata"]["labels"] = {KEY: "Always"}
    await kube.create(CLONESETS, cs, namespace)
    assert await refused(kube.delete(CLONESETS, "web", namespace)) == f"{FORBIDDEN} for {KEY}=Always"
    await kube.patch(
        CLONESETS, "web", {"metadata": {"labels": {KEY: "Cascading"}}, "spec": {"replicas": 2}}, namespace
    )
    assert (
        await refused(kube.delete(CLONESETS, "web", namespace))
        == f"{FORBIDDEN} for {KEY}=Cascading and replicas 2>0"
    )
    await scale(kube, CLONESETS, "web", namespace, 0)
    await kube.delete(CLONESETS, "web", namespace)


async def test_deployment_should_be_protected(kube: KubeClient, namespace: str) -> None:
    deploy = {
        "metadata": {"name": "deploy", "labels": {KEY: "Always"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"owner": "deploy"}},
            "template": {
                "metadata": {"labels": {"owner": "deploy"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:alpine"}]},
            },
        },
    }
    await kube.create(DEPLOYMENTS, deploy, namespace)
    assert await refused(kube.delete(DEPLOYMENTS, "deploy", namespace)) == f"{FORBIDDEN} for {KEY}=Always"
    await kube.patch(
        DEPLOYMENTS,
        "deploy",
        {"metadata": {"labels": {KEY: "Cascading"}}, "spec": {"replicas": 1}},
        namespace,
    )
    assert (
        await refused(kube.delete(DEPLOYMENTS, "deploy", namespace))
        == f"{FORBIDDEN} for {KEY}=Cascading and replicas 1>0"
    )
    await kube.patch(DEPLOYMENTS, "deploy", {"spec": {"replicas": 0}}, namespace)
    await kube.delete(DEPLOYMENTS, "deploy", namespace)


async def test_should_be_protected_service(kube: KubeClient, namespace: str) -> None:
    """upstream: ``Service deletion > should be protected`` (``Cascading`` does not protect it)."""
    svc = {"metadata": {"name": "svc", "labels": {KEY: "Always"}}, "spec": {"ports": [{"port": 80}]}}
    await kube.create(SERVICES, svc, namespace)
    assert await refused(kube.delete(SERVICES, "svc", namespace)) == f"{FORBIDDEN} for {KEY}=Always"
    await label(kube, SERVICES, "svc", "Cascading", namespace)
    await kube.delete(SERVICES, "svc", namespace)


async def test_should_be_protected_ingress(kube: KubeClient, namespace: str) -> None:
    """upstream: ``Ingress deletion > should be protected``."""
    backend = {"service": {"name": "svc", "port": {"number": 80}}}
    ing = {"metadata": {"name": "ing", "labels": {KEY: "Always"}}, "spec": {"defaultBackend": backend}}
    await kube.create(INGRESSES, ing, namespace)
    assert await refused(kube.delete(INGRESSES, "ing", namespace)) == f"{FORBIDDEN} for {KEY}=Always"
    await label(kube, INGRESSES, "ing", None, namespace)
    await kube.delete(INGRESSES, "ing", namespace)


async def test_unlabelled_objects_never_reach_the_webhook(
    kube: KubeClient, gated: ManagerProcess, own_namespace: str
) -> None:
    """The objectSelector keeps unlabelled deletes off the manager: with it stopped, deleting an
    unlabelled namespace passes while a labelled one still calls the (absent) webhook and fails."""
    name = f"dp-free-{uuid.uuid4().hex[:6]}"
    await kube.create(NAMESPACES, {"metadata": {"name": name}})
    gated.stop()
    try:
        await kube.delete(NAMESPACES, name)
        with pytest.raises(ApiError) as err:
            await kube.delete(NAMESPACES, own_namespace)
        assert "vnamespace.kb.io" in err.value.message
    finally:
        gated.start()


async def _pods(kube: KubeClient, namespace: str, want: int = 1) -> list[Any]:
    items = [
        p for p in (await kube.list(PODS, namespace))["items"] if "deletionTimestamp" not in p["metadata"]
    ]
    return items if len(items) >= want else []


async def _no_pods(kube: KubeClient, namespace: str) -> bool:
    return not (await kube.list(PODS, namespace))["items"]


async def _bound(kube: KubeClient, namespace: str) -> bool:
    return (await kube.get(PVCS, "data", namespace)).get("status", {}).get("phase") == "Bound"


async def _no_claims(kube: KubeClient, namespace: str) -> bool:
    return not (await kube.list(PVCS, namespace))["items"]


async def _gone(kube: KubeClient, res: Resource, name: str, namespace: str) -> bool:
    return await kube.get_or_none(res, name, namespace) is None
