"""The advanced Deployment controller's pure core: strategy annotation, partition limit, and which
ReplicaSet gets how many pods (tables and Hypothesis properties over a simulated cluster)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kruise.rollouts.advanceddeployment.replicasets import deployment_status, new_replicaset_body
from kruise.rollouts.advanceddeployment.rolling import decide_rollout
from kruise.rollouts.release.constants import BATCH_RELEASE_CONTROL_ANNOTATION, STABLE_REVISION_LABEL
from kruise.rollouts.workloads.deployment.strategy import (
    DEPLOYMENT_STRATEGY_ANNOTATION,
    DeploymentStrategy,
    dump_extra_status,
    dump_strategy,
    fenceposts,
    new_rs_limit,
    parse_strategy,
    under_control,
    with_defaults,
)

JSON = dict[str, Any]


def template(image: str) -> JSON:
    return {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": image}]}}


def deployment(
    replicas: int = 10,
    partition: int | str = 0,
    *,
    surge: int | str = 1,
    unavailable: int | str = 0,
    image: str = "v2",
    paused_strategy: bool = False,
) -> JSON:
    strategy = DeploymentStrategy("Partition", unavailable, surge, True, paused_strategy, partition)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "dep-uid",
            "generation": 3,
            "labels": {STABLE_REVISION_LABEL: "h-v1"},
            "annotations": {
                BATCH_RELEASE_CONTROL_ANNOTATION: '{"kind":"BatchRelease"}',
                DEPLOYMENT_STRATEGY_ANNOTATION: dump_strategy(strategy),
            },
        },
        "spec": {
            "replicas": replicas,
            "paused": True,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {"app": "web"}},
            "template": template(image),
        },
        "status": {"observedGeneration": 3},
    }


def rs(name: str, image: str, replicas: int, available: int | None = None, *, created: str = "1") -> JSON:
    ready = replicas if available is None else available
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": "7",
            "creationTimestamp": f"2026-01-01T00:00:0{created}Z",
            "labels": {"app": "web", "pod-template-hash": f"h-{image}"},
            "annotations": {"deployment.kubernetes.io/revision": created},
        },
        "spec": {
            "replicas": replicas,
            "template": {
                **template(image),
                "metadata": {"labels": {"app": "web", "pod-template-hash": f"h-{image}"}},
            },
        },
        "status": {"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready},
    }


def sizes(decision: Any) -> dict[str, int]:
    return {s.name: s.replicas for s in decision.scales}


# ----------------------------------------------------------------------------- strategy annotation


def test_strategy_annotation_round_trips_in_upstream_field_order() -> None:
    s = DeploymentStrategy("Partition", 0, 1, True, False, "20%")
    assert (
        dump_strategy(s)
        == '{"rollingStyle":"Partition","rollingUpdate":{"maxUnavailable":0,"maxSurge":1},"partition":"20%"}'
    )
    assert parse_strategy(dump_strategy(s)) == s
    assert parse_strategy("not json") == DeploymentStrategy()
    assert json.loads(dump_strategy(DeploymentStrategy("Partition", paused=True))) == {
        "rollingStyle": "Partition",
        "paused": True,
        "partition": 0,
    }


@pytest.mark.parametrize(
    ("surge", "unavailable", "want"),
    [
        pytest.param(None, None, ("25%", "25%"), id="both missing: 25% each"),
        pytest.param(0, 0, (0, 1), id="0/0 becomes maxSurge 0, maxUnavailable 1"),
        pytest.param("0%", "0%", (0, 1), id="0%/0% too"),
        pytest.param(2, None, (2, "25%"), id="each field its own default"),
    ],
)
def test_defaults(surge: Any, unavailable: Any, want: tuple[Any, Any]) -> None:
    got = with_defaults(DeploymentStrategy("Partition", unavailable, surge))
    assert (got.max_surge, got.max_unavailable) == want
    assert with_defaults(DeploymentStrategy("Canary")) == DeploymentStrategy("Canary")


@pytest.mark.parametrize(
    ("partition", "replicas", "want"),
    [
        pytest.param(0, 10, 0, id="nothing"),
        pytest.param(3, 10, 3, id="an absolute count"),
        pytest.param(30, 10, 10, id="clamped to replicas"),
        pytest.param("20%", 10, 2, id="a percent rounds up"),
        pytest.param("99%", 10, 9, id="below 100% keeps one old pod"),
        pytest.param("100%", 10, 10, id="100% is everything"),
        pytest.param("50%", 1, 1, id="one replica: rounds up to it"),
    ],
)
def test_new_rs_limit(partition: int | str, replicas: int, want: int) -> None:
    assert new_rs_limit(partition, replicas) == want


def test_fenceposts_round_surge_up_and_unavailable_down() -> None:
    assert fenceposts(DeploymentStrategy("Partition", "25%", "25%"), 10) == (3, 2)
    assert fenceposts(DeploymentStrategy("Partition", "1%", "0%"), 10) == (0, 1)
    assert fenceposts(DeploymentStrategy("Partition", 20, 0), 5) == (0, 5)


def test_extra_status_omits_zeros() -> None:
    assert dump_extra_status(0, 2) == '{"expectedUpdatedReplicas":2}'
    assert dump_extra_status(1, 2) == '{"updatedReadyReplicas":1,"expectedUpdatedReplicas":2}'


# ------------------------------------------------------------------------------- decisions (tables)


def test_only_deployments_under_partition_control() -> None:
    d = deployment()
    assert under_control(d)
    free = copy.deepcopy(d)
    free["spec"]["strategy"] = {"type": "RollingUpdate"}
    assert not under_control(free)
    assert decide_rollout(free, [rs("web-a", "v1", 10)]).status is None
    canary = copy.deepcopy(d)
    canary["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION] = '{"rollingStyle":"Canary"}'
    assert not under_control(canary)


def test_the_new_replicaset_is_created_named_by_hash_with_the_next_revision() -> None:
    d = deployment(partition="20%")
    decision = decide_rollout(d, [rs("web-a", "v1", 10)])
    body = decision.create
    assert body is not None and decision.scales == ()
    pod_hash = body["metadata"]["labels"]["pod-template-hash"]
    assert body["metadata"]["name"] == f"web-{pod_hash}"
    assert body["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert body["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == pod_hash
    assert body["spec"]["replicas"] == 1  # maxSurge 1 lets one new pod in
    annotations = body["metadata"]["annotations"]
    assert annotations["deployment.kubernetes.io/revision"] == "2"
    assert annotations[BATCH_RELEASE_CONTROL_ANNOTATION] == '{"kind":"BatchRelease"}'
    assert body["metadata"]["ownerReferences"][0]["uid"] == "dep-uid"
    assert new_replicaset_body(d, [], 0)["metadata"]["name"] == body["metadata"]["name"]


@pytest.mark.parametrize(
    ("d", "replicasets", "want_create", "want"),
    [
        pytest.param(
            deployment(partition=0, surge=0, unavailable=1),
            [rs("web-a", "v1", 10)],
            0,
            {},
            id="partition 0 and no surge: an empty new ReplicaSet",
        ),
        pytest.param(
            deployment(partition=3, surge=0, unavailable=1),
            [rs("web-a", "v1", 10)],
            1,
            {},
            id="maxSurge 0: the new ReplicaSet starts with one pod (kube must not scale the old back)",
        ),
        pytest.param(
            deployment(partition=3),
            [rs("web-a", "v1", 10), rs("web-b", "v2", 1, created="2")],
            None,
            {"web-a": 9},
            id="surge used up: old scales down by what availability allows",
        ),
        pytest.param(
            deployment(partition=3),
            [rs("web-a", "v1", 9), rs("web-b", "v2", 1, created="2")],
            None,
            {"web-b": 2},
            id="room again: the new one grows by the surge",
        ),
        pytest.param(
            deployment(partition=3),
            [rs("web-a", "v1", 7), rs("web-b", "v2", 3, created="2")],
            None,
            {},
            id="partition reached: nothing to do",
        ),
        pytest.param(
            deployment(replicas=12, partition="20%"),
            [rs("web-a", "v1", 8), rs("web-b", "v2", 2, created="2")],
            None,
            {"web-b": 3},
            id="scaled up: the new one grows to 20% of 12",
        ),
        pytest.param(
            deployment(replicas=12, partition="20%"),
            [rs("web-a", "v1", 8), rs("web-b", "v2", 3, created="2")],
            None,
            {"web-a": 9},
            id="scaled up: the old one grows back to its share",
        ),
        pytest.param(
            deployment(replicas=4, partition=3),
            [rs("web-a", "v1", 4), rs("web-b", "v2", 5, created="2")],
            None,
            {"web-b": 4},
            id="new above spec.replicas scales down to it",
        ),
        pytest.param(
            deployment(partition=3, surge=0, unavailable=2),
            [rs("web-a", "v1", 9, 7), rs("web-b", "v2", 1, created="2")],
            None,
            {"web-a": 7},
            id="unhealthy old pods go first",
        ),
        pytest.param(
            deployment(partition=5, paused_strategy=True),
            [rs("web-a", "v1", 7), rs("web-b", "v2", 3, created="2")],
            None,
            {},
            id="strategy paused: no rolling",
        ),
        pytest.param(
            deployment(replicas=12, partition=5, paused_strategy=True),
            [rs("web-a", "v1", 10)],
            None,
            {"web-a": 12},
            id="strategy paused: a lone active ReplicaSet follows spec.replicas",
        ),
    ],
)
def test_rolling_decisions(
    d: JSON, replicasets: list[JSON], want_create: int | None, want: dict[str, int]
) -> None:
    decision = decide_rollout(d, replicasets)
    assert (decision.create["spec"]["replicas"] if decision.create else None) == want_create
    assert sizes(decision) == want
    assert all(s.resource_version == "7" for s in decision.scales)


def sized_for(replicaset: JSON, replicas: int) -> JSON:
    """``replicaset`` last sized for a Deployment of ``replicas`` (kube's Recreate annotations)."""
    annotations = replicaset["metadata"]["annotations"]
    annotations["deployment.kubernetes.io/desired-replicas"] = str(replicas)
    annotations["deployment.kubernetes.io/max-replicas"] = str(replicas)
    return replicaset


@pytest.mark.parametrize(
    ("replicas", "replicasets", "want"),
    [
        pytest.param(
            20,
            [sized_for(rs("web-a", "v1", 6), 10), sized_for(rs("web-b", "v2", 4, created="2"), 10)],
            {"web-a": 12, "web-b": 8},
            id="10 to 20: each grows by round(size * 21 / 11), the leftover to the largest",
        ),
        pytest.param(
            10,
            [sized_for(rs("web-a", "v1", 12), 20), sized_for(rs("web-b", "v2", 8, created="2"), 20)],
            {"web-a": 6, "web-b": 4},
            id="20 to 10: each shrinks in proportion",
        ),
        pytest.param(
            6,
            [sized_for(rs("web-a", "v1", 6, 4), 10), sized_for(rs("web-b", "v2", 4, created="2"), 10)],
            {"web-a": 3, "web-b": 3},
            id="10 to 6: unhealthy old pods go first, then the rest in proportion (ties: older first)",
        ),
        pytest.param(
            14,
            [rs("web-a", "v1", 6), rs("web-b", "v2", 4, created="2")],
            {"web-a": 10},
            id="no max-replicas annotation and no status: everything to the largest",
        ),
        pytest.param(
            12,
            [rs("web-a", "v1", 0), rs("web-b", "v2", 0, created="2")],
            {"web-b": 12},
            id="no active ReplicaSet: the newest old one takes spec.replicas",
        ),
    ],
)
def test_a_paused_strategy_spreads_a_scaling_event_proportionally(
    replicas: int, replicasets: list[JSON], want: dict[str, int]
) -> None:
    """``sync``/``scale`` while the strategy is paused (a new template v3 is waiting, so every
    ReplicaSet is old): no rolling, only the scaling event, shared by size."""
    d = deployment(replicas=replicas, image="v3", partition=5, paused_strategy=True)
    decision = decide_rollout(d, replicasets)
    assert decision.create is None
    assert sizes(decision) == want


def test_a_saturated_new_replicaset_leaves_the_old_ones_at_zero_while_paused() -> None:
    new = sized_for(rs("web-b", "v2", 10, created="2"), 10)
    decision = decide_rollout(deployment(partition=5, paused_strategy=True), [rs("web-a", "v1", 2), new])
    assert sizes(decision) == {"web-a": 0}


def test_stable_revision_is_scaled_down_last() -> None:
    d = deployment(partition=4, surge=0, unavailable=3)
    v0 = rs("web-z", "v0", 4, created="0")
    v1 = rs("web-a", "v1", 4)
    new = rs("web-b", "v2", 2, created="2")
    decision = decide_rollout(d, [v0, v1, new])
    assert sizes(decision) == {"web-z": 2}


def test_status_and_extra_status_report_the_replicasets() -> None:
    d = deployment(partition="20%")
    replicasets = [rs("web-a", "v1", 8), rs("web-b", "v2", 2, 1, created="2")]
    decision = decide_rollout(d, replicasets)
    assert decision.status == {
        "observedGeneration": 3,
        "replicas": 10,
        "updatedReplicas": 2,
        "readyReplicas": 9,
        "availableReplicas": 9,
        "unavailableReplicas": 1,
    }
    assert json.loads(decision.extra_status or "") == {
        "updatedReadyReplicas": 1,
        "expectedUpdatedReplicas": 2,
    }
    assert not decision.done
    settled = decide_rollout(d, [rs("web-a", "v1", 8), rs("web-b", "v2", 2, created="2")])
    assert settled.done and settled.scales == ()
    assert deployment_status(d, None, [])["updatedReplicas"] == 0


def test_nothing_moves_while_a_replicaset_status_lags_its_spec() -> None:
    d = deployment(partition=3)
    old = rs("web-a", "v1", 9)
    old["metadata"]["generation"] = 4
    old["status"].update(observedGeneration=3, availableReplicas=10)  # still counts a deleted pod
    decision = decide_rollout(d, [old, rs("web-b", "v2", 1, created="2")])
    assert decision.create is None and decision.scales == () and not decision.done
    old["status"].update(observedGeneration=4, availableReplicas=9)
    assert sizes(decide_rollout(d, [old, rs("web-b", "v2", 1, created="2")])) == {"web-b": 2}


def test_pods_a_scale_down_is_still_deleting_are_not_counted_available() -> None:
    # kube's ReplicaSet controller writes the status of the sync that deletes a pod from the pods
    # it listed before: observedGeneration current, replicas and availableReplicas one too many
    d = deployment(5, "100%", surge=0, unavailable=1)
    old = rs("web-a", "v1", 4)
    old["metadata"]["generation"] = 2
    old["status"].update(replicas=5, availableReplicas=5, readyReplicas=5, observedGeneration=2)
    new = rs("web-b", "v2", 1, created="2")
    # counted raw, 6 available over a floor of 4 would take the old ReplicaSet to 2 (3 pods left)
    assert sizes(decide_rollout(d, [old, new])) == {"web-a": 3}


# ----------------------------------------------------------------------------- upstream e2e rules
UPSTREAM_CHECKER_STRATEGY = '{"rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}}'
"""``test/e2e/test_data/deployment/deployment.yaml``'s strategy annotation: no ``rollingStyle``."""


def test_a_strategy_annotation_without_rolling_style_is_processed_every_style_but_canary() -> None:
    """Upstream ``NewController``: a Deployment under rollout control is processed unless its
    strategy annotation says ``rollingStyle: Canary`` or does not decode (e2e "Advanced Deployment
    Checker", ``deployment_test.go:149``: its Deployment has no ``rollingStyle``)."""
    d = deployment()
    d["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION] = UPSTREAM_CHECKER_STRATEGY
    assert under_control(d)
    for style, want in (("Partition", True), ("BlueGreen", True), ("Canary", False)):
        d["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION] = json.dumps({"rollingStyle": style})
        assert under_control(d) is want, style
    for raw in ("", "not json", "[]"):
        d["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION] = raw
        assert not under_control(d), raw
    del d["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION]
    assert not under_control(d)


def test_a_deployment_created_under_control_gets_a_whole_first_replicaset() -> None:
    """``NewRSNewReplicas`` with no old pods: ``spec.replicas``, whatever the partition (upstream's
    checker creates its Deployment paused, ``Recreate``, partition 0, and expects 5 of 5 updated)."""
    d = deployment(replicas=5)
    d["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION] = UPSTREAM_CHECKER_STRATEGY
    decision = decide_rollout(d, [])
    assert decision.create is not None and decision.create["spec"]["replicas"] == 5
    assert (
        decide_rollout(deployment(replicas=5, partition="20%"), [rs("web-a", "v1", 0)]).create["spec"][
            "replicas"
        ]
        == 5
    ), "old ReplicaSets without pods: the same"


@pytest.mark.parametrize(
    ("replicas", "old", "new", "sized", "want"),
    [
        pytest.param(5, 8, 2, 10, {"web-a": 4, "web-b": 1}, id="10 to 5 at 20%: 1 new pod left, as upstream"),
        pytest.param(10, 4, 1, 5, {"web-a": 8, "web-b": 2}, id="5 to 10 at 20%: 2 new pods"),
    ],
)
def test_a_scaling_event_is_shared_in_proportion_while_rolling(
    replicas: int, old: int, new: int, sized: int, want: dict[str, int]
) -> None:
    """Upstream ``syncDeployment``: an active ReplicaSet sized for another ``spec.replicas``
    (``isScalingEvent``) is a scaling event, handled by ``sync`` (proportional scaling) even when
    the strategy is not paused; e2e "advanced deployment scaling case" (``:5026``) expects 1 updated
    pod after scaling 10 -> 5 at partition 20%."""
    d = deployment(replicas=replicas, partition="20%")
    replicasets = [
        sized_for(rs("web-a", "v1", old), sized),
        sized_for(rs("web-b", "v2", new, created="2"), sized),
    ]
    decision = decide_rollout(d, replicasets)
    assert decision.create is None
    assert sizes(decision) == want


def test_a_scaling_event_reannotates_a_replicaset_that_keeps_its_size() -> None:
    """``scaleReplicaSet`` writes the replicas annotations of every active ReplicaSet even at the
    same size; else the stale one would keep the Deployment in scaling mode, never rolling."""
    d = deployment(replicas=6, partition=3)
    replicasets = [sized_for(rs("web-a", "v1", 5), 5), sized_for(rs("web-b", "v2", 1, created="2"), 6)]
    decision = decide_rollout(d, replicasets)
    assert sizes(decision) == {"web-a": 5}
    refreshed = [sized_for(rs("web-a", "v1", 5), 6), replicasets[1]]
    assert sizes(decide_rollout(d, refreshed)) == {"web-b": 2}, "then it rolls: the surge lets one more in"
