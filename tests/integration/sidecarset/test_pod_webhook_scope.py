"""The pod webhook sees only the pods a SidecarSet could inject (its CEL match condition, judged
by the real API server), so a stopped manager blocks nothing else.

With the session manager stopped (``failurePolicy: Fail``, nothing listening): a pod some
SidecarSet selects is refused ("failed calling webhook"), as upstream refuses every pod then;
every other pod, here and in other namespaces, is created at once. Each selector operator is
checked on pods whose labels sit on either side of it. Once the SidecarSets are gone the
condition is only the fixed term of container launch priority: a pod that asks for a launch
order still waits for the manager, no other pod does.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import MUTATING_WEBHOOKS, NAMESPACES, PODS, SIDECARSETS
from kruise.core.webhook.configuration import MUTATING_NAME
from kruise.rollouts.manager.process import ManagerProcess
from kruise.workloads.launchpriority.webhook import POD_TERM as LAUNCH_PRIORITY_POD_TERM
from kruise.workloads.podwebhook import POD_CONDITION
from tests.integration.sidecarset.helpers import base_sidecarset, create_sidecarset
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

JSON = dict[str, Any]
PROMPT_SECONDS = 5.0


def bare_pod(name: str, labels: dict[str, str], annotations: dict[str, str] | None = None) -> JSON:
    containers = [{"name": "main", "image": "busybox:1"}, {"name": "second", "image": "busybox:1"}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels, "annotations": annotations or {}},
        "spec": {"terminationGracePeriodSeconds": 0, "containers": containers},
    }


async def condition(kube: KubeClient) -> str | None:
    config = await kube.get(MUTATING_WEBHOOKS, MUTATING_NAME)
    hook = next(h for h in config["webhooks"] if h["name"] == "mpod.kb.io")
    found = hook.get("matchConditions") or []
    return found[0]["expression"] if found else None


async def admitted(
    kube: KubeClient, namespace: str, labels: dict[str, str], annotations: dict[str, str] | None = None
) -> bool:
    """Create a pod; True when admitted (quickly), False when the webhook call failed."""
    name = f"p-{uuid.uuid4().hex[:6]}"
    started = time.monotonic()
    try:
        await kube.create(PODS, bare_pod(name, labels, annotations), namespace)
    except KruiseError as err:
        assert "failed calling webhook" in str(err), err
        return False
    assert time.monotonic() - started < PROMPT_SECONDS
    return True


@pytest.fixture
async def other_namespace(kube: KubeClient) -> AsyncIterator[str]:
    name = f"scope-other-{uuid.uuid4().hex[:5]}"
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    await kube.delete(NAMESPACES, name, missing_ok=True)


async def test_a_stopped_manager_blocks_only_pods_a_sidecarset_selects(
    kube: KubeClient, sidecarsets: str, other_namespace: str, manager: ManagerProcess
) -> None:
    ns = sidecarsets
    plain = base_sidecarset(ns, "-1")
    plain["spec"]["containers"] = plain["spec"]["containers"][:1]
    plain["spec"]["initContainers"] = []
    expressions = base_sidecarset(ns, "-2")
    expressions["spec"]["initContainers"] = []
    expressions["spec"]["containers"] = [{"name": "other-sidecar", "image": "busybox:1"}]
    expressions["spec"]["selector"] = {
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["a", "b"]},
            {"key": "zone", "operator": "NotIn", "values": ["z9"]},
            {"key": "team", "operator": "Exists"},
            {"key": "skip", "operator": "DoesNotExist"},
        ]
    }
    await create_sidecarset(kube, plain)
    await create_sidecarset(kube, expressions)
    live = await condition(kube)
    assert live is not None and f"request.namespace == '{ns}'" in live
    await asyncio.to_thread(manager.stop)
    try:
        selected = {"app": "sidecarset"}
        chosen = {"tier": "a", "team": "t"}
        cases = [
            (ns, selected, False),
            (ns, {"app": "web"}, True),
            (other_namespace, selected, True),  # the SidecarSets are scoped to ns
            (ns, chosen, False),
            (ns, {**chosen, "zone": "z1"}, False),
            (ns, {**chosen, "zone": "z9"}, True),  # NotIn
            (ns, {"tier": "c", "team": "t"}, True),  # In
            (ns, {"tier": "b"}, True),  # Exists
            (ns, {**chosen, "skip": "1"}, True),  # DoesNotExist
            ("default", {**chosen}, True),
        ]
        results = [await admitted(kube, where, labels) for where, labels, _ in cases]
        assert results == [expected for _, _, expected in cases]
    finally:
        await asyncio.to_thread(manager.start)
    for item in (await kube.list(SIDECARSETS))["items"]:
        if item["metadata"]["name"].startswith(plain["metadata"]["name"][:-2]):
            await kube.delete(SIDECARSETS, item["metadata"]["name"])

    async def unscoped() -> bool:
        return await condition(kube) == LAUNCH_PRIORITY_POD_TERM

    await eventually(unscoped, timeout=60, what="the pod webhook's condition back to launch priority's alone")
    await asyncio.to_thread(manager.stop)
    try:
        assert await admitted(kube, ns, {"app": "sidecarset"})
        ordered = {"apps.kruise.io/container-launch-priority": "Ordered"}
        assert not await admitted(kube, ns, {"app": "web"}, ordered)  # a launch order needs the manager
        assert await admitted(kube, ns, {"app": "web"}, {"apps.kruise.io/container-launch-priority": "No"})
    finally:
        await asyncio.to_thread(manager.start)
    for pod in (await kube.list(PODS, "default", label_selector="tier=a"))["items"]:
        await kube.delete(PODS, pod["metadata"]["name"], "default", missing_ok=True)


IDLE_SECONDS = 40.0
"""Longer than the 30 s recheck the scope controllers used to poll the configurations with."""


def webhook_config_gets(cluster: TestCluster) -> dict[str, float]:
    """The API server's ``apiserver_request_total`` of GETs of the webhook configurations, by
    resource (every code, scope and component summed)."""
    text = cluster.kubectl("get", "--raw", "/metrics").stdout
    out = {"mutatingwebhookconfigurations": 0.0, "validatingwebhookconfigurations": 0.0}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "apiserver_request_total" and sample.labels.get("verb") == "GET":
                resource = sample.labels.get("resource", "")
                if resource in out:
                    out[resource] += sample.value
    return out


async def test_a_foreign_rewrite_is_repaired_and_rest_reads_nothing(
    kube: KubeClient, cluster: TestCluster, sidecarsets: str, manager: ManagerProcess
) -> None:
    """Someone else rewriting ``mpod.kb.io``'s condition (a starting replica, a helm upgrade) is
    put back from the configuration's watch event, and at rest the scope controllers read neither
    configuration (no polling)."""
    await create_sidecarset(kube, base_sidecarset(sidecarsets, "-1"))

    async def scoped() -> bool:
        live = await condition(kube)
        return live is not None and f"request.namespace == '{sidecarsets}'" in live

    await eventually(scoped, timeout=30, what="the SidecarSet's namespace in the pod webhook's condition")
    config = await kube.get(MUTATING_WEBHOOKS, MUTATING_NAME)
    hook = next(h for h in config["webhooks"] if h["name"] == "mpod.kb.io")
    hook["matchConditions"] = [{"name": POD_CONDITION, "expression": "false"}]
    await kube.replace(MUTATING_WEBHOOKS, config)
    await eventually(scoped, timeout=20, what="the foreign condition repaired")

    before = await asyncio.to_thread(webhook_config_gets, cluster)
    await asyncio.sleep(IDLE_SECONDS)
    after = await asyncio.to_thread(webhook_config_gets, cluster)
    assert {k: after[k] - before[k] for k in after} == {k: 0.0 for k in after}
    assert await scoped()
