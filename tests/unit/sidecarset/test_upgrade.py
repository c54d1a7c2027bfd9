"""The upgrade controller's pure core: next_upgrades, status, pod updates, hot-upgrade flips."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.workloads.sidecarset.inject import inject
from kruise.workloads.sidecarset.keys import INPLACE_UPDATE_STATE_ANNOTATION, WORKING_HOT_UPGRADE_ANNOTATION
from kruise.workloads.sidecarset.podstate import is_state_consistent, is_updated, upgradability
from kruise.workloads.sidecarset.podupdate import flipped_pod, upgradable_condition, upgraded_pod
from kruise.workloads.sidecarset.upgrade import (
    calculate_status,
    hot_upgrade_flips,
    next_upgrades,
    partition_count,
    scatter_terms,
)
from tests.unit.sidecarset.builders import NOW, kubelet_applied, pod, running, sidecarset, with_image

JSON = dict[str, Any]


def injected(s: JSON, n: int, **labels: str) -> list[JSON]:
    pods = []
    for i in range(n):
        created = inject(pod(f"web-{i}", labels={"app": "web", **labels}), [s], NOW)
        assert created is not None
        created["metadata"]["creationTimestamp"] = f"2025-01-01T00:00:{i:02d}Z"
        pods.append(running(created))
    return pods


def names(pods: tuple[JSON, ...] | list[JSON]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


def upgrade_all(s: JSON, pods: list[JSON], chosen: tuple[JSON, ...], *, heal: bool = False) -> list[JSON]:
    """Write the chosen upgrades; the kubelet then runs them (KWOK's stage); with ``heal`` an
    upgraded pod turns Ready (the new sidecar fixed it)."""
    picked = set(names(chosen))
    out = []
    for p in pods:
        if p["metadata"]["name"] in picked:
            p = kubelet_applied(upgraded_pod(s, p, NOW))
            if heal:
                p["status"]["conditions"][0]["status"] = "True"
        out.append(p)
    return out


def test_nothing_to_do_when_every_pod_is_updated() -> None:
    s = sidecarset()
    plan = next_upgrades(s, injected(s, 3), NOW)
    assert plan.upgrade == () and plan.not_upgradable == ()


def test_default_max_unavailable_upgrades_one_at_a_time() -> None:
    old = sidecarset()
    new = with_image(old, "busybox:2")
    pods = injected(old, 3)
    plan = next_upgrades(new, pods, NOW)
    assert len(plan.upgrade) == 1
    written = upgraded_pod(new, plan.upgrade[0], NOW)
    pods = [written if p["metadata"]["name"] == written["metadata"]["name"] else p for p in pods]
    # written but not yet run by the kubelet: it counts against maxUnavailable
    assert not is_state_consistent(new, written)
    assert next_upgrades(new, pods, NOW).upgrade == ()


def test_partition_keeps_that_many_pods_old() -> None:
    old = sidecarset(updateStrategy={"partition": 2, "maxUnavailable": 5})
    new = with_image(old, "busybox:2")
    pods = injected(old, 5)
    for _ in range(4):
        pods = upgrade_all(new, pods, next_upgrades(new, pods, NOW).upgrade)
    assert sum(is_updated(new, p) for p in pods) == 3
    status = calculate_status(new, pods, "log-rev", 0)
    assert (status["matchedPods"], status["updatedPods"], status["readyPods"]) == (5, 3, 5)


@pytest.mark.parametrize(
    ("partition", "total", "expected"),
    [
        (None, 5, 0),
        (2, 5, 2),
        (9, 5, 5),
        ("40%", 5, 2),
        ("50%", 5, 3),  # rounded up
        ("100%", 5, 5),
        ("99%", 5, 4),  # below 100% still upgrades one
        ("1%", 5, 1),
        ("33.5%", 10, 4),
        ("x%", 5, 0),
    ],
)
def test_partition_count(partition: Any, total: int, expected: int) -> None:
    assert partition_count(partition, total) == expected


def test_unready_pods_are_upgraded_without_counting_against_max_unavailable() -> None:
    old = sidecarset()
    new = with_image(old, "busybox:2")
    pods = injected(old, 4)
    pods[1] = running(pods[1], ready=False)
    pods[3] = running(pods[3], ready=False)
    plan = next_upgrades(new, pods, NOW)
    assert sorted(names(plan.upgrade)) == ["web-1", "web-3"] or len(plan.upgrade) == 3
    assert {"web-1", "web-3"} <= set(names(plan.upgrade))


def test_a_pod_that_stays_unready_after_its_upgrade_blocks_the_rollout() -> None:
    """Upstream counts an updated pod that is not ready against maxUnavailable, whatever made it
    unready (a broken new image, or an app that was failing before). Round 1 upgrades the unready
    web-0 for free plus the newest ready pod; web-0 then holds the last one back for good."""
    old = sidecarset()
    new = with_image(old, "busybox:2")
    pods = injected(old, 3)
    pods[0] = running(pods[0], ready=False)
    for _ in range(4):
        pods = upgrade_all(new, pods, next_upgrades(new, pods, NOW).upgrade)
    assert [is_updated(new, p) for p in pods] == [True, False, True]


def test_an_upgraded_unready_pod_blocks_further_upgrades() -> None:
    old = sidecarset()
    new = with_image(old, "busybox:2")
    pods = injected(old, 3)
    first = next_upgrades(new, pods, NOW).upgrade
    pods = upgrade_all(new, pods, first)
    i = names(pods).index(names(first)[0])
    pods[i] = running(kubelet_applied(pods[i]), ready=False)  # new image never becomes ready
    pods[i]["status"]["containerStatuses"][0]["image"] = "busybox:2"
    assert next_upgrades(new, pods, NOW).upgrade == ()


def test_update_strategy_selector_limits_the_candidates() -> None:
    old = sidecarset(updateStrategy={"selector": {"matchLabels": {"canary": "true"}}, "maxUnavailable": 10})
    new = with_image(old, "busybox:2")
    pods = injected(old, 2) + injected(old, 1, canary="true")
    pods[2]["metadata"]["name"] = "canary"
    assert names(next_upgrades(new, pods, NOW).upgrade) == ["canary"]


def test_more_than_images_changed_is_not_upgradable() -> None:
    old = sidecarset()
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["command"] = ["sleep", "1"]
    from tests.unit.sidecarset.builders import with_hashes

    new = with_hashes(new)
    pods = injected(old, 2)
    plan = next_upgrades(new, pods, NOW)
    assert plan.upgrade == ()
    assert names(plan.not_upgradable) == ["web-0", "web-1"]
    assert upgradability(new, pods[0]).can_upgrade is False


def test_priority_then_scatter_order() -> None:
    old = sidecarset(
        updateStrategy={
            "maxUnavailable": 1,
            "priorityStrategy": {
                "weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"tier": "gold"}}}]
            },
        }
    )
    new = with_image(old, "busybox:2")
    pods = injected(old, 2) + injected(old, 1, tier="gold")
    pods[2]["metadata"]["name"] = "gold"
    assert names(next_upgrades(new, pods, NOW).upgrade) == ["gold"]


def test_scatter_star_expands_to_every_value() -> None:
    pods = [pod("a", labels={"zone": "z1"}), pod("b", labels={"zone": "z2"}), pod("c", labels={"zone": "z1"})]
    terms = scatter_terms([{"key": "zone", "value": "*"}, {"key": "rack", "value": "r1"}], pods)
    assert terms == [
        {"key": "zone", "value": "z1"},
        {"key": "zone", "value": "z2"},
        {"key": "rack", "value": "r1"},
    ]


def test_upgraded_pod_changes_only_the_sidecar_image_and_records_the_old_image_id() -> None:
    old = sidecarset()
    new = with_image(old, "busybox:2")
    before = injected(old, 1)[0]
    after = upgraded_pod(new, before, NOW)
    images = {c["name"]: c["image"] for c in after["spec"]["containers"]}
    assert images == {"sidecar": "busybox:2", "app": "nginx:1"}
    state = json.loads(after["metadata"]["annotations"][INPLACE_UPDATE_STATE_ANNOTATION])["log"]
    assert state["lastContainerStatuses"] == {"sidecar": {"imageID": "sha256:busybox:1"}}
    assert is_updated(new, after)
    assert not is_state_consistent(new, after)
    assert is_state_consistent(new, kubelet_applied(after))


def test_status_counts_ready_only_when_consistent() -> None:
    old = sidecarset()
    new = with_image(old, "busybox:2")
    pods = injected(old, 2)
    pods[0] = upgraded_pod(new, pods[0], NOW)  # written, not yet run
    status = calculate_status(new, pods, "rev", 0)
    assert status == {
        "observedGeneration": 1,
        "matchedPods": 2,
        "updatedPods": 1,
        "readyPods": 1,
        "updatedReadyPods": 0,
        "latestRevision": "rev",
        "collisionCount": 0,
    }


def hot_sidecarset(image: str = "envoy:1") -> JSON:
    return sidecarset(
        containers=[
            {
                "name": "envoy",
                "image": image,
                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
            }
        ]
    )


def test_hot_upgrade_writes_the_idle_container_then_flips_the_old_one_to_empty() -> None:
    old = hot_sidecarset()
    new = with_image(old, "envoy:2")
    current = injected(old, 1)[0]
    written = upgraded_pod(new, current, NOW)
    images = {c["name"]: c["image"] for c in written["spec"]["containers"]}
    assert images["envoy-2"] == "envoy:2" and images["envoy-1"] == "envoy:1"  # envoy-1 keeps working
    annotations = written["metadata"]["annotations"]
    assert json.loads(annotations[WORKING_HOT_UPGRADE_ANNOTATION]) == {"envoy": "envoy-2"}
    assert annotations["version.sidecarset.kruise.io/envoy-2"] == "7"
    assert annotations["versionalt.sidecarset.kruise.io/envoy-2"] == "1"
    assert annotations["versionalt.sidecarset.kruise.io/envoy-1"] == "7"
    assert hot_upgrade_flips(new, [written]) == []  # the new container is not running yet
    ran = kubelet_applied(written)
    assert hot_upgrade_flips(new, [ran]) == [ran]
    flipped = flipped_pod(new, ran, NOW)
    images = {c["name"]: c["image"] for c in flipped["spec"]["containers"]}
    assert images["envoy-1"] == "empty:1" and images["envoy-2"] == "envoy:2"
    assert flipped["metadata"]["annotations"]["version.sidecarset.kruise.io/envoy-1"] == "0"
    assert flipped["metadata"]["annotations"]["versionalt.sidecarset.kruise.io/envoy-2"] == "0"
    done = kubelet_applied(flipped)
    assert hot_upgrade_flips(new, [done]) == []
    assert calculate_status(new, [done], "r", 0)["updatedReadyPods"] == 1


def test_hot_upgrade_not_ready_until_the_idle_container_is_empty_again() -> None:
    old = hot_sidecarset()
    new = with_image(old, "envoy:2")
    ran = kubelet_applied(upgraded_pod(new, injected(old, 1)[0], NOW))
    assert calculate_status(new, [ran], "r", 0)["readyPods"] == 0


def test_upgradable_condition_message_merges_verdicts() -> None:
    p = running(pod())
    first = upgradable_condition(p, "a", False, NOW)
    assert first is not None
    assert (first["status"], first["reason"], json.loads(first["message"])) == (
        "False",
        "UpdateImmutableField",
        {"a": False},
    )
    p["status"]["conditions"].append(first)
    assert upgradable_condition(p, "a", False, NOW) is None  # nothing to write
    second = upgradable_condition(p, "b", True, NOW)
    assert second is not None and second["status"] == "False"
    p["status"]["conditions"][-1] = upgradable_condition(p, "a", True, NOW)
    third = upgradable_condition(p, "a", True, NOW)
    assert third is None


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=12),
    partition=st.integers(min_value=0, max_value=12),
    max_unavailable=st.integers(min_value=1, max_value=5),
    unready=st.sets(st.integers(min_value=0, max_value=11)),
)
def test_rounds_converge_to_exactly_total_minus_partition(
    n: int, partition: int, max_unavailable: int, unready: set[int]
) -> None:
    """Property: repeated rounds (the kubelet applying each write, unready pods turning Ready once
    upgraded) end with exactly max(0, n - partition) pods updated, and no round upgrades more
    ready pods than maxUnavailable."""
    old = sidecarset(updateStrategy={"partition": partition, "maxUnavailable": max_unavailable})
    new = with_image(old, "busybox:2")
    pods = injected(old, n)
    for i in unready:
        if i < n:
            pods[i] = running(pods[i], ready=False)
    for _ in range(n + 2):
        plan = next_upgrades(new, pods, NOW)
        ready_chosen = [p for p in plan.upgrade if p["status"]["conditions"][0]["status"] == "True"]
        assert len(ready_chosen) <= max_unavailable
        pods = upgrade_all(new, pods, plan.upgrade, heal=True)
    assert sum(is_updated(new, p) for p in pods) == max(0, n - partition)
