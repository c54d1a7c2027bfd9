"""The manager stopped, then frozen: workloads no Rollout references are not affected.

Every webhook keeps ``failurePolicy: Fail``. The workload hold webhooks only see workloads a
Rollout labelled ``rollouts.kruise.io/workload-type`` (outside ``kube-system`` and the manager's
namespace); the CloneSet webhooks only a CREATE or a ``spec`` change; ``kubectl scale`` writes
the ``scale`` subresource, which no webhook sees. So ``kubectl scale``, ``set image``, ``label``
and ``patch`` of an unrelated Deployment, and ``scale``, ``label`` and ``annotate`` of an unrelated
CloneSet, in the test namespace and in ``kube-system``, and ``scale`` and ``set image`` of an
unrelated StatefulSet, answer at once while the manager is down or hung. A workload a Rollout
references is still held: a template change of it is refused while the manager cannot answer
(within ``--webhook-timeout-seconds`` when it hangs), and held at ``partition: 100%`` once it is
back. The label goes when the Rollout goes.

A template change of an unrelated CloneSet is not in the list: the CloneSet validating webhook
must judge every new template (upstream's too), so it waits for the manager.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, NATIVE_STATEFULSETS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.cloneset.test_cloneset_inplace import web_cloneset
from tests.integration.faults.conftest import WEBHOOK_TIMEOUT_SECONDS
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster
from tests.support.managers import Supervisor
from tests.support.wait import eventually

JSON = dict[str, Any]
PROMPT_SECONDS = 5.0
"""An answer that did not wait for a webhook (kubectl's own start-up included, on a busy machine)."""
LABEL = "rollouts.kruise.io/workload-type"


def deployment(name: str, namespace: str) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "c", "image": "registry.example.com/shop/c:1"}],
                },
            },
        },
    }


def cloneset(name: str, namespace: str) -> JSON:
    body = web_cloneset(namespace, replicas=1, partition=0)
    body["metadata"]["name"] = name
    return body


def deployment_rollout(namespace: str) -> JSON:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "api", "namespace": namespace},
        "spec": {
            "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
            "strategy": {"canary": {"steps": [{"replicas": 1, "pause": {}}, {"replicas": "100%"}]}},
        },
    }


@pytest.fixture
async def system_workloads(kube: KubeClient) -> AsyncIterator[str]:
    """An unrelated Deployment and CloneSet in ``kube-system`` (removed afterwards)."""
    name = f"fault-{uuid.uuid4().hex[:5]}"
    await kube.create(DEPLOYMENTS, deployment(name, "kube-system"), "kube-system")
    await kube.create(CLONESETS, cloneset(name, "kube-system"), "kube-system")
    try:
        yield name
    finally:
        await kube.delete(DEPLOYMENTS, name, "kube-system", missing_ok=True)
        await kube.delete(CLONESETS, name, "kube-system", missing_ok=True)


def statefulset(name: str, namespace: str) -> JSON:
    body = deployment(name, namespace)
    body["kind"] = "StatefulSet"
    body["spec"].pop("strategy", None)
    body["spec"]["serviceName"] = name
    return body


def statefulset_operations(namespace: str, name: str, n: int) -> list[list[str]]:
    """``kubectl scale`` and ``set image`` of a StatefulSet no Rollout references (issue 13: the
    StatefulSet hold selects labelled workloads only, like the others)."""
    s = f"statefulset/{name}"
    return [
        ["scale", s, f"--replicas={2 - n % 2}", "-n", namespace],
        ["set", "image", s, f"c=registry.example.com/shop/c:{n + 2}", "-n", namespace],
    ]


def unrelated_operations(namespace: str, deploy: str, clone: str, n: int) -> list[list[str]]:
    """What a user or an autoscaler does to workloads no Rollout references."""
    d, c = f"deployment/{deploy}", f"cloneset/{clone}"
    return [
        ["scale", d, "--replicas=2", "-n", namespace],
        ["set", "image", d, f"c=registry.example.com/shop/c:{n + 2}", "-n", namespace],
        ["label", d, f"touched={n}", "--overwrite", "-n", namespace],
        ["patch", d, "--type=merge", "-p", '{"spec":{"replicas":1}}', "-n", namespace],
        ["scale", c, "--replicas=2", "-n", namespace],
        ["label", c, f"touched={n}", "--overwrite", "-n", namespace],
        ["annotate", c, f"note={n}", "--overwrite", "-n", namespace],
    ]


async def timed(cluster: TestCluster, args: list[str]) -> tuple[int, float, str]:
    started = time.monotonic()
    proc = await asyncio.to_thread(cluster.kubectl, "--request-timeout=60s", *args, check=False)
    return proc.returncode, time.monotonic() - started, proc.stderr.strip()


async def all_prompt(cluster: TestCluster, operations: list[list[str]]) -> float:
    """Run ``operations``; each must succeed without waiting; returns the slowest, in seconds."""
    slowest = 0.0
    for args in operations:
        code, seconds, err = await timed(cluster, args)
        assert code == 0, f"kubectl {' '.join(args)}: {err}"
        assert seconds < PROMPT_SECONDS, f"kubectl {' '.join(args)} took {seconds:.1f}s"
        slowest = max(slowest, seconds)
    return slowest


def image_patch(kind: str, name: str, namespace: str, image: str) -> list[str]:
    container = "web" if kind == "cloneset" else "c"
    body = (
        f'{{"spec":{{"template":{{"spec":{{"containers":[{{"name":"{container}","image":"{image}"}}]}}}}}}}}'
    )
    strategy = "merge" if kind == "cloneset" else "strategic"
    return ["patch", f"{kind}/{name}", f"--type={strategy}", "-p", body, "-n", namespace]


async def labels_of(kube: KubeClient, res: Any, name: str, namespace: str) -> dict[str, str]:
    obj = await kube.get(res, name, namespace)
    return dict(obj["metadata"].get("labels") or {})


async def test_unrelated_workloads_do_not_wait_for_a_stopped_or_frozen_manager(
    kube: KubeClient,
    cluster: TestCluster,
    namespace: str,
    replica: ManagerProcess,
    system_workloads: str,
) -> None:
    await kube.create(DEPLOYMENTS, deployment("other", namespace), namespace)
    await kube.create(CLONESETS, cloneset("other", namespace), namespace)
    await kube.create(NATIVE_STATEFULSETS, statefulset("other", namespace), namespace)
    await kube.create(DEPLOYMENTS, deployment("api", namespace), namespace)
    await kube.create(ROLLOUTS, deployment_rollout(namespace), namespace)
    ro = h.rollout(namespace, [{"replicas": 1, "pause": {}}, {"replicas": "100%"}])
    await h.start(kube, namespace, ro, replicas=2)

    async def labelled() -> bool:
        web = await labels_of(kube, CLONESETS, "web", namespace)
        api = await labels_of(kube, DEPLOYMENTS, "api", namespace)
        return web.get(LABEL) == "cloneset" and api.get(LABEL) == "deployment"

    await eventually(labelled, timeout=30, what="the referenced workloads labelled by their Rollouts")
    assert LABEL not in await labels_of(kube, DEPLOYMENTS, "other", namespace)
    ops = [
        *unrelated_operations(namespace, "other", "other", 0),
        *statefulset_operations(namespace, "other", 0),
        *unrelated_operations("kube-system", system_workloads, system_workloads, 0),
    ]
    up = await all_prompt(cluster, ops)

    # stopped: nothing listens on the webhook port
    await asyncio.to_thread(replica.stop)
    ops = [
        *unrelated_operations(namespace, "other", "other", 1),
        *statefulset_operations(namespace, "other", 1),
        *unrelated_operations("kube-system", system_workloads, system_workloads, 1),
    ]
    stopped = await all_prompt(cluster, ops)
    for kind, name in (("cloneset", "web"), ("deployment", "api")):
        code, seconds, err = await timed(
            cluster, image_patch(kind, name, namespace, "registry.example.com/x:9")
        )
        assert code != 0 and "failed calling webhook" in err, f"{kind}/{name} must stay held: {err}"
        assert seconds < PROMPT_SECONDS

    # frozen: the port accepts connections, nothing answers
    await asyncio.to_thread(replica.start)
    assert replica.proc is not None
    os.kill(replica.proc.pid, signal.SIGSTOP)
    try:
        ops = [
            *unrelated_operations(namespace, "other", "other", 2),
            *statefulset_operations(namespace, "other", 2),
            *unrelated_operations("kube-system", system_workloads, system_workloads, 2),
        ]
        frozen = await all_prompt(cluster, ops)
        code, held_for, err = await timed(
            cluster, image_patch("cloneset", "web", namespace, "registry.example.com/x:9")
        )
        assert code != 0 and "failed calling webhook" in err, err
        assert WEBHOOK_TIMEOUT_SECONDS - 1 <= held_for < WEBHOOK_TIMEOUT_SECONDS + 10, held_for
    finally:
        os.kill(replica.proc.pid, signal.SIGCONT)
    print(
        f"\n[kruise] slowest unrelated operation: up {up:.2f}s, stopped {stopped:.2f}s, frozen {frozen:.2f}s;"
        f" referenced CloneSet refused after {held_for:.1f}s while frozen"
    )

    # back: the referenced CloneSet is held for its Rollout, the labels go with the Rollouts
    async with Supervisor(kube, replica):  # a replica frozen past its lease exits; play the kubelet
        await eventually(lambda: _patched(cluster, namespace), timeout=60, what="the manager answering again")
        held = await kube.get(CLONESETS, "web", namespace)
        assert held["spec"]["updateStrategy"]["partition"] == "100%"
        assert "rollouts.kruise.io/in-progressing" in held["metadata"]["annotations"]
        for name in ("web", "api"):
            await kube.delete(ROLLOUTS, name, namespace)

        async def unlabelled() -> bool:
            web = await labels_of(kube, CLONESETS, "web", namespace)
            api = await labels_of(kube, DEPLOYMENTS, "api", namespace)
            gone = [await kube.get_or_none(ROLLOUTS, n, namespace) for n in ("web", "api")]
            return LABEL not in web and LABEL not in api and gone == [None, None]

        await eventually(unlabelled, timeout=60, what="Rollouts gone and their labels removed")


async def _patched(cluster: TestCluster, namespace: str) -> bool:
    code, _, _ = await timed(cluster, image_patch("cloneset", "web", namespace, "registry.example.com/x:9"))
    return code == 0
