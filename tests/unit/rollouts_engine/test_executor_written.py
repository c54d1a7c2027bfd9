"""The BatchRelease executor remembers what it wrote (batchrelease/executor.py): a round on a cached
BatchRelease or workload older than its last write waits, instead of writing the same again."""

from __future__ import annotations

from typing import Any, cast

from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS
from kruise.rollouts.batchrelease.executor import ReleaseExecutor
from kruise.rollouts.workloads.ops import ControlDecision, Op, OpKind
from kruise.rollouts.workloads.port import Observation

JSON = dict[str, Any]


class FakeKube:
    """Answers every patch with the object at the next resourceVersion."""

    def __init__(self) -> None:
        self.version = 10
        self.patches: list[tuple[str, JSON]] = []

    async def patch(self, res: Any, name: str, body: JSON, namespace: str | None = None, **_: Any) -> JSON:
        self.version += 1
        self.patches.append((res.plural, body))
        return {
            "metadata": {
                "name": name,
                "uid": f"uid-{res.plural}-{name}",
                "resourceVersion": str(self.version),
            }
        }


def obj(plural: str, name: str, version: str, **extra: Any) -> JSON:
    return {
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": f"uid-{plural}-{name}",
            "resourceVersion": version,
        },
        **extra,
    }


async def test_a_cache_older_than_the_last_status_write_is_stale_until_it_catches_up() -> None:
    kube = FakeKube()
    executor = ReleaseExecutor(cast(KubeClient, kube))
    br = obj("batchreleases", "web", "10", status={"phase": "Progressing"})
    workload = Observation(obj("clonesets", "web", "5"))
    assert not executor.stale(br, workload)

    await executor.apply("shop/web", br, ControlDecision((), {"phase": "Completed"}, None))
    assert kube.patches == [("batchreleases", {"status": {"phase": "Completed"}})]
    assert executor.stale(br, workload)  # the cache still holds resourceVersion 10; we wrote 11
    assert not executor.stale(obj("batchreleases", "web", "11"), workload)
    assert not executor.stale(br, workload)  # caught up once: the expectation is gone


async def test_a_workload_write_waits_for_the_workload_but_a_pod_write_waits_for_nothing() -> None:
    kube = FakeKube()
    executor = ReleaseExecutor(cast(KubeClient, kube))
    br = obj("batchreleases", "web", "3", status={})
    partition = Op(OpKind.PATCH, CLONESETS, "web", {"spec": {"updateStrategy": {"partition": 2}}})
    label = Op(OpKind.PATCH, PODS, "web-1", {"metadata": {"labels": {"a": "b"}}})
    await executor.apply("shop/web", br, ControlDecision((partition, label), {}, None))
    assert executor.stale(br, Observation(obj("clonesets", "web", "10")))
    assert not executor.stale(br, Observation(obj("clonesets", "web", "11")))
    assert not executor.stale(br, Observation(obj("clonesets", "web", "10")))
    assert not executor.stale(br, None)
