"""Argo CD's health checks and kstatus (Flux) read our live objects right at every phase of a release.

A watcher samples the CloneSet and the Rollout every 0.2 s through a canary release (wait for
approval, move on, complete) and then a scale to zero. For every sample, Argo CD's own health
scripts (``tests/data/argocd``, run as Argo CD runs them) and kstatus (its documented algorithm,
``tests.support.kstatus``) must give what that phase calls for:

- the Rollout: Argo CD Suspended while a step waits for approval, Progressing while it moves,
  Healthy once completed; kstatus InProgress until the release is done, Current after;
- the CloneSet: kstatus Current only when every pod is updated and available (so Flux waits for
  the release, which the partition holds back); Argo CD's script as upstream's objects make it
  answer (Suspended while the partition holds, even at "0%" before the release hands the CloneSet
  back, Healthy when done, Suspended at zero replicas).

``kubectl wait --for=condition=Ready`` times out on the paused release and returns once it is done.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from tests.integration.rollouts import helpers as h
from tests.support.argocd import argocd_health
from tests.support.cluster import TestCluster
from tests.support.kstatus import CURRENT, IN_PROGRESS, compute
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

STEPS = [{"replicas": 1, "pause": {}}, {"replicas": "50%", "pause": {"duration": 1}}, {"replicas": "100%"}]
Sample = tuple[dict[str, Any], dict[str, Any]]  # (CloneSet, Rollout)


def rollout_expectation(ro: Mapping[str, Any]) -> tuple[str, str] | None:
    """(Argo CD, kstatus) a Rollout in this phase calls for; None for phases not pinned here."""
    status = ro.get("status") or {}
    if status.get("observedGeneration") != ro["metadata"].get("generation"):
        return None
    phase, state = status.get("phase"), h.canary_status(ro).get("currentStepState")
    if phase == "Progressing" and state == "StepPaused":
        return "Suspended", IN_PROGRESS
    if phase == "Progressing" and state in ("StepUpgrade", "BeforeStepUpgrade", "StepTrafficRouting"):
        return "Progressing", IN_PROGRESS
    if phase == "Healthy" and state == "Completed":
        return "Healthy", CURRENT
    return None


def cloneset_done(cs: Mapping[str, Any]) -> bool:
    """Every pod updated and available, the spec observed: the release has really happened."""
    spec, status = cs["spec"], cs.get("status") or {}
    want = int(spec.get("replicas", 1))
    return (
        status.get("observedGeneration") == cs["metadata"]["generation"]
        and int(status.get("replicas") or 0) == want
        and int(status.get("updatedReplicas") or 0) == want
        and int(status.get("updatedAvailableReplicas") or 0) == want
    )


async def sample(kube: KubeClient, namespace: str, into: list[Sample], stop: asyncio.Event) -> None:
    while not stop.is_set():
        cs = await kube.get(CLONESETS, "web", namespace)
        ro = await h.get_rollout(kube, namespace)
        into.append((cs, ro))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.2)


def wait_ready(cluster: TestCluster, namespace: str, timeout: str) -> int:
    return cluster.kubectl(
        "-n", namespace, "wait", "--for=condition=Ready", "rollout/web", f"--timeout={timeout}", check=False
    ).returncode


async def test_argocd_and_kstatus_through_a_release(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    await h.start(kube, namespace, h.rollout(namespace, STEPS, h.ROUTING_GATEWAY), "httproute", replicas=4)
    samples: list[Sample] = []
    stop = asyncio.Event()
    watcher = asyncio.create_task(sample(kube, namespace, samples, stop))
    try:
        await asyncio.sleep(0.5)
        await h.set_image(kube, namespace, h.V2)
        await h.wait_paused_at(kube, namespace, 1)
        await asyncio.sleep(0.5)
        assert await asyncio.to_thread(wait_ready, cluster, namespace, "2s") != 0, "not Ready while paused"
        await h.approve(kube, namespace)
        await h.wait_completed(kube, namespace, timeout=90)
        assert await asyncio.to_thread(wait_ready, cluster, namespace, "30s") == 0
        await h.wait_settled(kube, namespace, 4)
        await asyncio.sleep(0.5)
    finally:
        stop.set()
        await watcher

    seen: set[tuple[str, str, str]] = set()
    for cs, ro in samples:
        expected = rollout_expectation(ro)
        if expected is not None:
            got = (argocd_health(ro)[0], compute(ro))
            assert got == expected, (ro["status"], got)
            seen.add(("Rollout", *got))
        kstatus = compute(cs)
        assert kstatus == (CURRENT if cloneset_done(cs) else IN_PROGRESS), cs["status"]
        argo = argocd_health(cs)[0]
        assert argo in ("Healthy", "Suspended", "Degraded", "Progressing"), (argo, cs["status"])
        released = cs["spec"]["updateStrategy"].get("partition") in (None, 0)
        if kstatus == CURRENT and released:  # the Rollout handed the CloneSet back
            assert argo == "Healthy", ("done, yet Argo CD says", argo, cs["status"])
        seen.add(("CloneSet", argo, kstatus))
    assert {
        ("Rollout", "Suspended", IN_PROGRESS),
        ("Rollout", "Healthy", CURRENT),
        ("CloneSet", "Suspended", IN_PROGRESS),  # the partition holds pods back: Flux waits
        ("CloneSet", "Healthy", CURRENT),
    } <= seen, seen


async def test_a_cloneset_scaled_to_zero(kube: KubeClient, namespace: str) -> None:
    await h.create_web(kube, namespace, replicas=2)
    await kube.patch(CLONESETS, "web", {"spec": {"replicas": 0}}, namespace)

    async def empty() -> dict[str, Any] | None:
        cs = await kube.get(CLONESETS, "web", namespace)
        status = cs.get("status") or {}
        done = (
            status.get("observedGeneration") == cs["metadata"]["generation"] and status.get("replicas") == 0
        )
        return cs if done else None

    cs = await eventually(empty, timeout=30, what="the CloneSet at zero replicas")
    assert "updatedAvailableReplicas" not in cs["status"] and "expectedUpdatedReplicas" not in cs["status"]
    assert cs["status"]["updatedReplicas"] == 0, "fields without omitempty stay"
    assert argocd_health(cs) == ("Suspended", "Cloneset is paused"), "as for upstream's object"
    assert compute(cs) == CURRENT
