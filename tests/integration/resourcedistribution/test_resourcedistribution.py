"""ResourceDistribution with ``ResourceDistributionGate`` on (off by default, so a replica of the
manager with it replaces the session's): upstream's e2e
``test/e2e/apps/v1alpha1/resourcedistribution.go``, one test per ``It``, plus a label selector
followed both ways, a same-named ConfigMap it does not own counted failed and left alone, and
the webhook's refusals."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kruise.core.errors import ApiError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONFIGMAPS, NAMESPACES, SECRETS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.workloads.api.resourcedistribution import RESOURCE_HASH_ANNOTATION, RESOURCEDISTRIBUTIONS
from tests.support.cluster import TestCluster
from tests.support.managers import own_replica
from tests.support.wait import eventually

SECRET_NAME = "resourcedistribution-e2e-test-secret"
SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": SECRET_NAME},
    "data": {".dockerconfigjson": "eyJhdXRocyI6e319"},
    "type": "Opaque",
}


@pytest.fixture(scope="module")
async def gated(
    manager: ManagerProcess, cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ManagerProcess]:
    gates = ("--feature-gates=ResourceDistributionGate=true",)
    async with own_replica(manager, cluster, tmp_path_factory.mktemp("rd"), extra_args=gates) as own:
        yield own


pytestmark = pytest.mark.usefixtures("gated")


class World:
    """The test's namespaces and distributors (named ``<prefix>...``), deleted afterwards."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube
        self.prefix = f"rd-{uuid.uuid4().hex[:6]}"
        self.namespaces: list[str] = []

    async def namespace(self, suffix: str, **labels: str) -> str:
        name = f"{self.prefix}-{suffix}"
        await self.kube.create(NAMESPACES, {"metadata": {"name": name, "labels": labels}})
        self.namespaces.append(name)
        return name

    async def distributor(self, targets: dict[str, Any], resource: dict[str, Any] = SECRET) -> dict[str, Any]:
        body = {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "ResourceDistribution",
            "metadata": {"name": self.prefix},
            "spec": {"resource": resource, "targets": targets},
        }
        return await self.kube.create(RESOURCEDISTRIBUTIONS, body)

    def listed(self, *suffixes: str) -> dict[str, Any]:
        return {"list": [{"name": f"{self.prefix}-{s}"} for s in suffixes]}

    async def close(self) -> None:
        await self.kube.delete(RESOURCEDISTRIBUTIONS, self.prefix, missing_ok=True)
        for ns in self.namespaces:
            await self.kube.delete(NAMESPACES, ns, missing_ok=True)


@pytest.fixture
async def world(kube: KubeClient) -> AsyncIterator[World]:
    w = World(kube)
    try:
        yield w
    finally:
        await w.close()


async def copies(
    kube: KubeClient, namespaces: list[str], name: str = SECRET_NAME
) -> dict[str, dict[str, Any]]:
    found = {ns: await kube.get_or_none(SECRETS, name, ns) for ns in namespaces}
    return {ns: obj for ns, obj in found.items() if obj is not None}


async def copies_in(kube: KubeClient, namespaces: list[str], expected: set[str]) -> dict[str, dict[str, Any]]:
    async def probe() -> tuple[dict[str, dict[str, Any]]] | None:
        found = await copies(kube, namespaces)
        return (found,) if set(found) == expected else None

    return (await eventually(probe, timeout=60, what=f"copies exactly in {sorted(expected)}"))[0]


async def status_of(kube: KubeClient, name: str, **want: int) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        st = (await kube.get(RESOURCEDISTRIBUTIONS, name)).get("status", {})
        return st if all(st.get(k) == v for k, v in want.items()) else None

    return await eventually(probe, timeout=60, what=f"status {want}")


async def test_namespace_event_checker(kube: KubeClient, world: World) -> None:
    p = world.prefix
    later = await world.namespace("update-matched")
    await world.distributor({"namespaceLabelSelector": {"matchLabels": {p: "seven"}}})
    created = await world.namespace("creat-matched", **{p: "seven"})
    await kube.patch(NAMESPACES, later, {"metadata": {"labels": {p: "seven"}}})
    await copies_in(kube, world.namespaces, {created, later})


async def test_resource_event_checker(kube: KubeClient, world: World) -> None:
    one, two = await world.namespace("1"), await world.namespace("2")
    await world.distributor({"includedNamespaces": world.listed("1", "2")})
    await copies_in(kube, world.namespaces, {one, two})
    await kube.patch(SECRETS, SECRET_NAME, {"stringData": {"updated": "yes"}}, one)

    async def reverted() -> bool:
        return set((await kube.get(SECRETS, SECRET_NAME, one))["data"]) == {".dockerconfigjson"}

    await eventually(reverted, timeout=60, what="the edit reverted")
    await kube.delete(SECRETS, SECRET_NAME, one)
    await copies_in(kube, world.namespaces, {one, two})


async def test_resourcedistribution_functionality_checker(kube: KubeClient, world: World) -> None:
    ns = [
        await world.namespace("1", **{"e2e-rd-group": "one", "environment": "develop"}),
        await world.namespace("2", **{"e2e-rd-group": "one", "environment": "develop"}),
        await world.namespace("3", **{"e2e-rd-group": "one", "environment": "develop"}),
        await world.namespace("4", **{"e2e-rd-group": "one", "environment": "test"}),
        await world.namespace("5", **{"e2e-rd-group": "two", "environment": "test"}),
    ]
    targets = {
        "excludedNamespaces": world.listed("4"),
        "includedNamespaces": world.listed("1", "2", "3", "5"),
        "namespaceLabelSelector": {"matchLabels": {"e2e-rd-group": "one"}},
    }
    rd = await world.distributor(targets)
    found = await copies_in(kube, world.namespaces, {ns[0], ns[1], ns[2], ns[4]})
    status = await status_of(kube, world.prefix, desired=4, succeeded=4, failed=0)
    stored = json.dumps(rd["spec"]["resource"], sort_keys=True, separators=(",", ":"))
    assert {o["metadata"]["annotations"][RESOURCE_HASH_ANNOTATION] for o in found.values()} == {
        hashlib.sha256(stored.encode()).hexdigest()
    }
    assert [c["status"] for c in status["conditions"]] == ["False"] * 6
    await kube.delete(NAMESPACES, ns[0])
    status = await status_of(kube, world.prefix, desired=4, succeeded=3)
    assert status["conditions"][5]["failedNamespace"] == [ns[0]]
    targets |= {
        "includedNamespaces": world.listed("2"),
        "namespaceLabelSelector": {"matchLabels": {"e2e-rd-group": "two"}},
    }
    await kube.patch(RESOURCEDISTRIBUTIONS, world.prefix, {"spec": {"targets": targets}})
    await status_of(kube, world.prefix, desired=2, succeeded=2)
    await copies_in(kube, world.namespaces, {ns[1], ns[4]})
    await kube.delete(RESOURCEDISTRIBUTIONS, world.prefix)
    await copies_in(kube, world.namespaces, set())  # the garbage collector follows the ownerReferences


async def test_label_selector_follows_labels_both_ways(kube: KubeClient, world: World) -> None:
    p = world.prefix
    a = await world.namespace("a", **{p: "yes"})
    b = await world.namespace("b")
    await world.namespace("c", **{p: "no"})
    await world.distributor({"namespaceLabelSelector": {"matchLabels": {p: "yes"}}})
    await copies_in(kube, world.namespaces, {a})
    await kube.patch(NAMESPACES, b, {"metadata": {"labels": {p: "yes"}}})
    await copies_in(kube, world.namespaces, {a, b})
    await kube.patch(NAMESPACES, a, {"metadata": {"labels": {p: None}}})
    await copies_in(kube, world.namespaces, {b})
    await status_of(kube, p, desired=1, succeeded=1, failed=0)


async def test_a_same_named_configmap_it_does_not_own_is_counted_failed_and_untouched(
    kube: KubeClient, world: World
) -> None:
    mine, theirs = await world.namespace("mine"), await world.namespace("theirs")
    foreign = await kube.create(
        CONFIGMAPS, {"metadata": {"name": "settings"}, "data": {"owner": "someone"}}, theirs
    )
    resource = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings"},
        "data": {"owner": "rd"},
    }
    await world.distributor({"includedNamespaces": world.listed("mine", "theirs")}, resource)
    status = await status_of(kube, world.prefix, desired=2, succeeded=1, failed=1)
    conflict = status["conditions"][4]
    assert (conflict["type"], conflict["status"], conflict["failedNamespace"]) == (
        "ConflictOccurred",
        "True",
        [theirs],
    )
    assert (await kube.get(CONFIGMAPS, "settings", mine))["data"] == {"owner": "rd"}
    after = await kube.get(CONFIGMAPS, "settings", theirs)
    assert (
        after["data"] == {"owner": "someone"}
        and after["metadata"]["resourceVersion"] == foreign["metadata"]["resourceVersion"]
    )
    assert "ownerReferences" not in after["metadata"]


async def test_webhook_refuses_bad_distributors_and_changes_nothing(kube: KubeClient, world: World) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    with pytest.raises(ApiError) as err:
        await world.distributor({"allNamespaces": True}, pod)
    assert "unknown or unsupported resource GroupKind, only support [Secret ConfigMap]" in err.value.message
    with pytest.raises(ApiError) as err:
        await world.distributor(
            {"includedNamespaces": world.listed("x"), "excludedNamespaces": world.listed("x")}
        )
    assert (
        f"ambiguous targets because namespace [{world.prefix}-x] is in both IncludedNamespaces.List and "
        "ExcludedNamespaces.List" in err.value.message
    )
    assert await kube.get_or_none(RESOURCEDISTRIBUTIONS, world.prefix) is None
    await world.distributor({"includedNamespaces": world.listed("x")})
    with pytest.raises(ApiError) as err:
        await kube.patch(
            RESOURCEDISTRIBUTIONS, world.prefix, {"spec": {"resource": {"metadata": {"name": "other"}}}}
        )
    assert "resource apiVersion, kind, and name are immutable" in err.value.message
    stored = await kube.get(RESOURCEDISTRIBUTIONS, world.prefix)
    assert stored["spec"]["resource"]["metadata"]["name"] == SECRET_NAME


async def test_two_hundred_namespaces_with_changing_labels(kube: KubeClient, world: World) -> None:
    """An RD over 200 namespaces by label: copies in exactly the labelled ones while labels move
    both ways in bulk (100 unlabelled, 50 labelled), and the status counts follow."""
    p = world.prefix
    names = [await world.namespace(f"n{i:03d}", **({p: "yes"} if i % 2 == 0 else {})) for i in range(200)]
    await world.distributor({"namespaceLabelSelector": {"matchLabels": {p: "yes"}}})
    labelled = set(names[::2])
    found = await copies_in(kube, names, labelled)
    hashes = {obj["metadata"]["annotations"][RESOURCE_HASH_ANNOTATION] for obj in found.values()}
    assert len(hashes) == 1
    await status_of(kube, p, desired=100, succeeded=100, failed=0)

    dropped, added = names[0:100:2], names[1:100:2]  # 50 labelled lose it, 50 unlabelled gain it
    for ns in dropped:
        await kube.patch(NAMESPACES, ns, {"metadata": {"labels": {p: None}}})
    for ns in added:
        await kube.patch(NAMESPACES, ns, {"metadata": {"labels": {p: "yes"}}})
    labelled = (labelled - set(dropped)) | set(added)
    await copies_in(kube, names, labelled)
    await status_of(kube, p, desired=100, succeeded=100, failed=0)
