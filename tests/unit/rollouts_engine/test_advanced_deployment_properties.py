"""Properties of the advanced Deployment controller's decisions over a simulated cluster.

Each round applies the decision (a scale-down removes unavailable pods first, new pods start
unavailable), checks the invariants, then lets every pod become available. Invariants:

- pods never exceed ``replicas + maxSurge`` (``+1`` when maxSurge is 0: the first pod of a new
  ReplicaSet, upstream's guard against kube's own controller);
- available pods never drop below ``replicas - maxUnavailable`` (everything starts available),
  also when a scaled-down ReplicaSet's status still counts the deleted pods for ``lag`` more
  decisions (kube's ReplicaSet controller writes it so) and pods become available only every
  ``kubelet_every`` rounds;
- the new ReplicaSet never grows past the partition limit;
- it converges: new = limit, old = replicas - limit, and deciding again changes nothing.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kruise.rollouts.advanceddeployment.rolling import decide_rollout
from kruise.rollouts.workloads.deployment.strategy import DeploymentStrategy, fenceposts, new_rs_limit
from tests.unit.rollouts_engine.test_advanced_deployment import deployment, rs

JSON = dict[str, Any]
int_or_pct = st.one_of(st.integers(0, 6), st.sampled_from(["0%", "10%", "25%", "50%", "100%"]))


def _sync_status(r: JSON, available: int) -> None:
    r["status"] = {
        "replicas": r["spec"]["replicas"],
        "readyReplicas": available,
        "availableReplicas": available,
    }


def _kubelet(rss: list[JSON], truth: dict[str, int], lagging: dict[str, int]) -> None:
    """Every pod becomes available; the statuses of ``lagging`` ReplicaSets stay behind."""
    for r in rss:
        truth[r["metadata"]["name"]] = r["spec"]["replicas"]
        if r["metadata"]["name"] not in lagging:
            _sync_status(r, r["spec"]["replicas"])


@settings(max_examples=150, deadline=None)
@given(
    replicas=st.integers(1, 12),
    partition=st.one_of(st.integers(0, 14), st.sampled_from(["0%", "20%", "50%", "99%", "100%"])),
    surge=int_or_pct,
    unavailable=int_or_pct,
    split=st.integers(0, 12),
    lag=st.integers(0, 2),
    kubelet_every=st.integers(1, 3),
)
# a scale-down's status still counting its pods two decisions on (found by this test)
@example(replicas=3, partition=3, surge=1, unavailable=0, split=0, lag=2, kubelet_every=1)
def test_rolling_respects_surge_availability_and_partition(
    replicas: int,
    partition: int | str,
    surge: int | str,
    unavailable: int | str,
    split: int,
    lag: int,
    kubelet_every: int,
) -> None:
    d = deployment(replicas, partition, surge=surge, unavailable=unavailable)
    max_surge, max_unavailable = fenceposts(DeploymentStrategy("Partition", unavailable, surge), replicas)
    limit = new_rs_limit(partition, replicas)
    older = min(split, replicas)
    rss = [rs("web-a", "v1", replicas - older, created="1")]
    if older:
        rss.append(rs("web-z", "v0", older, created="0"))
    ceiling = replicas + max(max_surge, 1)
    truth = {r["metadata"]["name"]: r["spec"]["replicas"] for r in rss}  # pods really available
    lagging: dict[str, int] = {}  # statuses still counting a scale-down's pods: decisions left
    for round_ in range(80):
        decision = decide_rollout(d, rss)
        if decision.create is None and not decision.scales:
            if not lagging and all(truth[r["metadata"]["name"]] == r["spec"]["replicas"] for r in rss):
                break
            lagging = {}  # nothing to do until the cluster catches up: let it
            _kubelet(rss, truth, lagging)
            continue
        new_before = next(
            (
                r["spec"]["replicas"]
                for r in rss
                if r["metadata"]["name"].startswith("web-")
                and r["spec"]["template"]["spec"]["containers"][0]["image"] == "v2"
            ),
            0,
        )
        if decision.create is not None:
            body = decision.create
            body["metadata"].update(
                uid="uid-new", resourceVersion="1", creationTimestamp="2026-01-01T00:00:09Z"
            )
            _sync_status(body, 0)
            rss.append(body)
            truth[body["metadata"]["name"]] = 0
        by_name = {r["metadata"]["name"]: r for r in rss}
        for name, left in list(lagging.items()):  # the deletions are observed after ``lag`` rounds
            if left > 1:
                lagging[name] = left - 1
            else:
                del lagging[name]
                _sync_status(by_name[name], truth[name])
        for scale in decision.scales:
            target = by_name[scale.name]
            name = target["metadata"]["name"]
            truth[name] = min(truth[name], scale.replicas)
            shrunk = scale.replicas < target["spec"]["replicas"]
            target["spec"]["replicas"] = scale.replicas
            if lag and shrunk:
                lagging[name] = lag
            else:
                _sync_status(target, truth[name])
        total = sum(r["spec"]["replicas"] for r in rss)
        assert total <= ceiling
        assert sum(truth.values()) >= replicas - max_unavailable
        new_now = next(
            r["spec"]["replicas"]
            for r in rss
            if r["spec"]["template"]["spec"]["containers"][0]["image"] == "v2"
        )
        assert new_now <= max(limit, new_before)
        if round_ % kubelet_every == 0:
            _kubelet(rss, truth, lagging)
    else:
        raise AssertionError("did not converge")
    new = [r for r in rss if r["spec"]["template"]["spec"]["containers"][0]["image"] == "v2"]
    assert sum(r["spec"]["replicas"] for r in new) == limit
    assert sum(r["spec"]["replicas"] for r in rss) == replicas
    assert decide_rollout(d, rss).scales == ()


@settings(max_examples=60, deadline=None)
@given(replicas=st.integers(1, 10), grow=st.integers(-5, 8), partition=st.sampled_from([1, 3, "40%", "100%"]))
def test_scaling_mid_release_converges_to_the_new_size(
    replicas: int, grow: int, partition: int | str
) -> None:
    start = rs("web-a", "v1", replicas)
    new = rs("web-b", "v2", 0, created="2")
    rss = [start, new]
    target = max(1, replicas + grow)
    d = deployment(target, partition, surge=1, unavailable=1)
    for _ in range(80):
        decision = decide_rollout(d, rss)
        if not decision.scales:
            break
        by_name = {r["metadata"]["name"]: r for r in rss}
        for scale in decision.scales:
            by_name[scale.name]["spec"]["replicas"] = scale.replicas
        for r in rss:
            _sync_status(r, r["spec"]["replicas"])
    else:
        raise AssertionError("did not converge")
    assert sum(r["spec"]["replicas"] for r in rss) == target
    assert new["spec"]["replicas"] == new_rs_limit(partition, target)
