"""Progress deadline, abort and retry (issue 17 item 1; rollout/deadline.py).

A canary stuck on a broken image: an image on a registry ``invalid.`` never pulls (the KWOK stage
``pod-image-pull-backoff`` keeps a pod updated in place to it in ImagePullBackOff, unready). With
``progressDeadlineAbort`` the release aborts once the deadline passes: every pod back on the
stable revision while the CloneSet keeps the new template, ``kruise rollout status`` exits 1 and
the kstatus ``Stalled`` condition says why; ``kruise rollout retry`` restarts it at step 1. A
``kruise rollout abort`` of a canary that already takes traffic sends the traffic back first.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, EVENTS, PODS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from kruise.traffic.resources import INGRESSES
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster
from tests.support.managers import kill_and_restart
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

BROKEN = "invalid.registry.k8s.io/shop/web:1.5.0"  # the KWOK stage pod-image-pull-backoff
STEPS: list[dict[str, Any]] = [
    {"replicas": 1, "traffic": "20%", "pause": {}},
    {"replicas": "60%", "traffic": "60%", "pause": {}},
    {"replicas": "100%"},
]
JSON = dict[str, Any]


def with_deadline(namespace: str, seconds: int | None, abort: bool = False) -> JSON:
    ro = h.rollout(namespace, STEPS, h.ROUTING_INGRESS)
    if seconds is not None:
        ro["spec"]["progressDeadlineSeconds"] = seconds
    if abort:
        ro["spec"]["progressDeadlineAbort"] = True
    return ro


async def warning(kube: KubeClient, namespace: str, reason: str) -> list[JSON]:
    events = (await kube.list(EVENTS, namespace))["items"]
    return [
        e
        for e in events
        if e.get("reason") == reason
        and e.get("type") == "Warning"
        and (e.get("involvedObject") or {}).get("kind") == "Rollout"
    ]


async def wait_held(kube: KubeClient, namespace: str, timeout: float = 90) -> JSON:
    async def probe() -> JSON | None:
        ro = await h.get_rollout(kube, namespace)
        return ro if h.canary_status(ro).get("finalisingStep") == "Held" else None

    return await eventually(probe, timeout=timeout, interval=0.5, what="the abort held")


async def pull_backoff_pods(kube: KubeClient, namespace: str) -> list[JSON]:
    pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    return [
        p
        for p in pods
        if any(
            ((s.get("state") or {}).get("waiting") or {}).get("reason") == "ImagePullBackOff"
            for s in (p.get("status") or {}).get("containerStatuses") or ()
        )
    ]


async def test_a_canary_stuck_on_a_broken_image_aborts_at_its_deadline_and_retries_from_step_one(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    await h.start(kube, namespace, with_deadline(namespace, 10, abort=True), "ingress", replicas=5)
    await h.set_image(kube, namespace, BROKEN)

    stuck = await eventually(
        lambda: pull_backoff_pods(kube, namespace), timeout=30, what="a canary pod in ImagePullBackOff"
    )
    assert len(stuck) == 1 and not any(
        c["type"] == "Ready" and c["status"] == "True" for c in stuck[0]["status"]["conditions"]
    )
    ro = await wait_held(kube, namespace)
    aborted = h.condition(ro, "Aborted")
    assert (aborted["status"], aborted["reason"]) == ("True", "ProgressDeadlineExceeded"), aborted
    assert "progressDeadlineSeconds=10" in aborted["message"]
    assert ro["status"]["phase"] == "Progressing"
    stalled = h.condition(ro, "Stalled")
    assert (stalled["status"], stalled["reason"]) == ("True", "ProgressDeadlineExceeded"), stalled
    assert h.condition(ro, "Ready")["status"] == "False"
    assert len(await warning(kube, namespace, "ProgressDeadlineExceeded")) == 1

    await h.wait_pods(kube, namespace, {h.V1: 5}, timeout=60)
    await h.wait_settled_replicas(kube, namespace, 5)
    cloneset = await kube.get(CLONESETS, "web", namespace)
    assert cloneset["spec"]["template"]["spec"]["containers"][0]["image"] == BROKEN, "the template is held"
    assert cloneset["spec"]["updateStrategy"]["partition"] == 5
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
    canary = await kube.get_or_none(INGRESSES, "web-canary", namespace)
    assert h.canary_ingress_annotations(canary).get("canary-weight") in (None, "0")

    shown = h.kruise("rollout", "status", "rollout/web", "-n", namespace, "--no-watch", cluster=cluster)
    assert shown.returncode == 1, shown.stdout + shown.stderr
    refused = h.kruise("rollout", "abort", "rollout/web", "-n", namespace, cluster=cluster)
    assert refused.returncode == 1 and "not rolling out" in refused.stderr, refused.stderr

    retried = h.kruise("rollout", "retry", "rollout/web", "-n", namespace, cluster=cluster)
    assert retried.returncode == 0, retried.stdout + retried.stderr

    async def restarted() -> JSON | None:
        ro = await h.get_rollout(kube, namespace)
        cs = h.canary_status(ro)
        again = cs.get("currentStepIndex") == 1 and not h.condition(ro, "Aborted")
        return ro if again and h.condition(ro, "Progressing").get("reason") == "InRolling" else None

    await eventually(restarted, timeout=30, what="the release at step 1 again")
    await eventually(
        lambda: pull_backoff_pods(kube, namespace), timeout=30, what="step 1's canary pod created again"
    )
    assert (await h.pods_by_image(kube, namespace)).get(h.V1) == 4

    await h.set_image(kube, namespace, h.V2)  # the fix: a new release from step 1
    await h.wait_paused_at(kube, namespace, 1)
    await h.wait_pods(kube, namespace, {h.V1: 4, h.V2: 1})


async def test_a_deadline_without_abort_warns_then_kruise_rollout_abort_sends_traffic_back_first(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    await h.start(kube, namespace, with_deadline(namespace, 5), "ingress", replicas=5)
    await h.set_image(kube, namespace, BROKEN)

    async def stalled() -> JSON | None:
        ro = await h.get_rollout(kube, namespace)
        return ro if h.condition(ro, "ProgressDeadline").get("status") == "True" else None

    ro = await eventually(stalled, timeout=40, interval=0.5, what="ProgressDeadline True")
    assert h.condition(ro, "ProgressDeadline")["reason"] == "ProgressDeadlineExceeded"
    assert h.condition(ro, "Stalled")["reason"] == "ProgressDeadlineExceeded"
    assert h.condition(ro, "Progressing")["reason"] == "InRolling", "no abort without progressDeadlineAbort"
    assert len(await warning(kube, namespace, "ProgressDeadlineExceeded")) == 1
    shown = h.kruise("rollout", "status", "rollout/web", "-n", namespace, "--no-watch", cluster=cluster)
    assert shown.returncode == 1 and "stalled" in shown.stdout, shown.stdout + shown.stderr

    # a fix moves it on (the condition goes); at step 1 the canary takes 20% of the traffic
    await h.set_image(kube, namespace, h.V2)
    ro = await h.wait_paused_at(kube, namespace, 1)
    assert not h.condition(ro, "ProgressDeadline")
    canary = await kube.get(INGRESSES, "web-canary", namespace)
    assert h.canary_ingress_annotations(canary)["canary-weight"] == "20"

    samples: list[tuple[str | None, int]] = []

    async def sample() -> JSON | None:
        canary = await kube.get_or_none(INGRESSES, "web-canary", namespace)
        weight = h.canary_ingress_annotations(canary).get("canary-weight")
        samples.append((weight, (await h.pods_by_image(kube, namespace)).get(h.V2, 0)))
        ro = await h.get_rollout(kube, namespace)
        return ro if h.canary_status(ro).get("finalisingStep") == "Held" else None

    aborted = h.kruise("rollout", "abort", "rollout/web", "-n", namespace, cluster=cluster)
    assert aborted.returncode == 0, aborted.stdout + aborted.stderr
    ro = await eventually(sample, timeout=60, interval=0.2, what="the abort held")
    assert h.condition(ro, "Aborted")["reason"] == "AbortedByUser"
    assert not [s for s in samples if s[1] == 0 and s[0] not in (None, "0")], "pods went back before traffic"
    await h.wait_pods(kube, namespace, {h.V1: 5}, timeout=60)
    cloneset = await kube.get(CLONESETS, "web", namespace)
    assert cloneset["spec"]["template"]["spec"]["containers"][0]["image"] == h.V2


async def test_the_manager_killed_mid_abort_finishes_it(
    kube: KubeClient, namespace: str, replica: ManagerProcess
) -> None:
    await h.start(kube, namespace, with_deadline(namespace, 5, abort=True), "ingress", replicas=5)
    await h.set_image(kube, namespace, BROKEN)

    async def aborting() -> JSON | None:
        ro = await h.get_rollout(kube, namespace)
        step = h.canary_status(ro).get("finalisingStep")
        return ro if h.condition(ro, "Aborted") and step not in ("", "Held", None) else None

    caught = await eventually(aborting, timeout=60, interval=0.05, what="the abort under way")
    await kill_and_restart(kube, replica)
    ro = await wait_held(kube, namespace)
    assert h.condition(ro, "Aborted")["reason"] == "ProgressDeadlineExceeded", caught["status"]
    await h.wait_pods(kube, namespace, {h.V1: 5}, timeout=60)
    cloneset = await kube.get(CLONESETS, "web", namespace)
    assert cloneset["spec"]["template"]["spec"]["containers"][0]["image"] == BROKEN
    assert len(await warning(kube, namespace, "ProgressDeadlineExceeded")) == 1


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        pytest.param({"progressDeadlineSeconds": -5}, "spec.progressDeadlineSeconds", id="negative deadline"),
        pytest.param(
            {"progressDeadlineAbort": True}, "spec.progressDeadlineAbort", id="abort without deadline"
        ),
    ],
)
async def test_bad_deadlines_are_refused_naming_the_field(
    kube: KubeClient, namespace: str, spec: JSON, field: str
) -> None:
    ro = h.rollout(namespace, STEPS)
    ro["spec"].update(spec)
    with pytest.raises(InvalidError) as refused:
        await kube.create(ROLLOUTS, ro, namespace)
    assert field in refused.value.message, refused.value.message
    assert not (await kube.list(ROLLOUTS, namespace))["items"]
