"""kubectl-kruise's kinds beyond CloneSet and Deployment (pure): type words, the pod spec ``set``
edits, restart, pause, undo's refusal, and the status viewers of StatefulSets and DaemonSets."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube.resources import NATIVE_DAEMONSETS, NATIVE_STATEFULSETS, PODS
from kruise.rollouts.cli.edits import EditError, pause_patch, pick_revision, restart_edit
from kruise.rollouts.cli.kinds import rules, settable
from kruise.rollouts.cli.refs import (
    ADVANCED_DAEMONSETS,
    ADVANCED_STATEFULSETS,
    CRONJOBS,
    Ref,
    RefError,
    only,
    parse_refs,
    ref_of,
    resource_type,
)
from kruise.rollouts.cli.status_view import (
    advanced_statefulset_verdict,
    daemonset_verdict,
    statefulset_verdict,
)
from kruise.rollouts.cli.template_edits import env_patch, image_patch
from kruise.rollouts.resources import ROLLOUTS


@pytest.mark.parametrize(
    ("word", "res"),
    [
        ("sts", NATIVE_STATEFULSETS),
        ("statefulset", NATIVE_STATEFULSETS),
        ("StatefulSets.apps", NATIVE_STATEFULSETS),
        ("ds", NATIVE_DAEMONSETS),
        ("daemonsets", NATIVE_DAEMONSETS),
        ("asts", ADVANCED_STATEFULSETS),
        ("statefulset.apps.kruise.io", ADVANCED_STATEFULSETS),
        ("sts.apps.kruise.io", ADVANCED_STATEFULSETS),
        ("ads", ADVANCED_DAEMONSETS),
        ("daemon", ADVANCED_DAEMONSETS),
        ("daemonsets.apps.kruise.io", ADVANCED_DAEMONSETS),
        ("po", PODS),
    ],
)
def test_a_word_two_kinds_share_names_the_builtin_one(word: str, res: object) -> None:
    assert resource_type(word) == res


def test_advanced_kinds_print_with_their_group_and_come_from_files_by_api_version() -> None:
    (ref,) = parse_refs(["asts/db"], "ns")
    assert str(ref) == "statefulset.apps.kruise.io/db"
    assert str(Ref(NATIVE_DAEMONSETS, "agent", "ns")) == "daemonset.apps/agent"
    doc = {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "metadata": {"name": "db"}}
    assert ref_of(doc, "ns").res == ADVANCED_STATEFULSETS
    assert ref_of({**doc, "apiVersion": "apps/v1"}, "ns").res == NATIVE_STATEFULSETS
    with pytest.raises(RefError, match="does not handle kind"):
        ref_of({**doc, "apiVersion": "example.com/v1"}, "ns")


def test_set_takes_kruise_tools_kinds_and_refuses_a_rollout() -> None:
    assert {ADVANCED_STATEFULSETS, ADVANCED_DAEMONSETS, NATIVE_STATEFULSETS, NATIVE_DAEMONSETS, PODS} <= set(
        settable()
    )
    with pytest.raises(RefError, match=r'^rollouts.rollouts.kruise.io "r" setting is not supported$'):
        only(parse_refs(["rollout/r"], "ns"), settable(), "setting")


def _containers(image: str) -> dict[str, Any]:
    return {"containers": [{"name": "main", "image": image}]}


def test_set_edits_the_pod_spec_where_the_kind_has_it() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": _containers("a")}
    assert image_patch(pod, {"main": "b"}) == [
        {"op": "replace", "path": "/spec/containers/0/image", "value": "b"}
    ]
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "spec": {"jobTemplate": {"spec": {"template": {"spec": _containers("a")}}}},
    }
    assert image_patch(cronjob, {"*": "b"}) == [
        {"op": "replace", "path": "/spec/jobTemplate/spec/template/spec/containers/0/image", "value": "b"}
    ]
    ads = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "spec": {"template": {"spec": _containers("a")}},
    }
    assert env_patch(ads, {"K": "v"}) == [
        {"op": "add", "path": "/spec/template/spec/containers/0/env", "value": [{"name": "K", "value": "v"}]}
    ]
    with pytest.raises(EditError, match='unable to find container named "x"'):
        image_patch(pod, {"x": "b"})


def test_restart_annotates_native_sets_and_sets_the_env_of_advanced_ones() -> None:
    ds = {"spec": {"template": {"spec": _containers("a")}}}
    how, patch = restart_edit(Ref(NATIVE_DAEMONSETS, "d", "ns"), ds, "t1")
    assert (how, patch) == (
        "merge",
        {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "t1"}}}}},
    )
    how, body = restart_edit(Ref(ADVANCED_STATEFULSETS, "s", "ns"), ds, "t2")
    assert how == "replace"
    assert body["spec"]["template"]["spec"]["containers"][0]["env"] == [
        {"name": "RESTARTED_AT", "value": "t2"}
    ]
    with pytest.raises(EditError, match=r"^restarting is not supported$"):
        restart_edit(Ref(ROLLOUTS, "r", "ns"), {}, "t")


def test_pause_and_resume_refuse_statefulsets_and_daemonsets_as_kubectl_kruise() -> None:
    for res in (NATIVE_STATEFULSETS, ADVANCED_STATEFULSETS, ADVANCED_DAEMONSETS):
        with pytest.raises(EditError, match=r"^pausing is not supported$"):
            pause_patch(Ref(res, "x", "ns"), {"spec": {}}, True)
        with pytest.raises(EditError, match=r"^resuming is not supported$"):
            pause_patch(Ref(res, "x", "ns"), {"spec": {}}, False)


def test_undo_with_one_revision_in_each_kinds_words() -> None:
    with pytest.raises(EditError, match=r"^no latest revision to roll back to$"):
        pick_revision({1: {}}, 0, rules(ADVANCED_STATEFULSETS).no_previous)
    with pytest.raises(EditError, match=r"^no last revision to roll back to$"):
        pick_revision({1: {}}, 0, rules(ADVANCED_DAEMONSETS).no_previous)
    assert rules(CRONJOBS).history is None and rules(CRONJOBS).status is None


def _obj(generation: int, spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "x", "generation": generation}, "spec": spec, "status": status}


@pytest.mark.parametrize(
    ("obj", "message", "done"),
    [
        (
            _obj(2, {}, {"observedGeneration": 1}),
            "Waiting for daemon set spec update to be observed...",
            False,
        ),
        (
            _obj(1, {}, {"observedGeneration": 1, "desiredNumberScheduled": 3, "updatedNumberScheduled": 1}),
            'Waiting for daemon set "x" rollout to finish: 1 out of 3 new pods have been updated...',
            False,
        ),
        (
            _obj(
                1,
                {},
                {
                    "observedGeneration": 1,
                    "desiredNumberScheduled": 3,
                    "updatedNumberScheduled": 3,
                    "numberAvailable": 2,
                },
            ),
            'Waiting for daemon set "x" rollout to finish: 2 of 3 updated pods are available...',
            False,
        ),
        (
            _obj(
                1,
                {},
                {
                    "observedGeneration": 1,
                    "desiredNumberScheduled": 3,
                    "updatedNumberScheduled": 3,
                    "numberAvailable": 3,
                },
            ),
            'daemon set "x" successfully rolled out',
            True,
        ),
        (
            _obj(
                1,
                {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}},
                {
                    "observedGeneration": 1,
                    "desiredNumberScheduled": 3,
                    "updatedNumberScheduled": 1,
                    "numberAvailable": 3,
                },
            ),
            "partitioned roll out complete: 1 new pods have been updated...",
            True,
        ),
    ],
)
def test_daemonset_verdicts(obj: dict[str, Any], message: str, done: bool) -> None:
    verdict = daemonset_verdict(obj)
    assert (verdict.message, verdict.done, verdict.error) == (message, done, "")


def test_only_rolling_updates_have_a_status() -> None:
    on_delete = _obj(1, {"updateStrategy": {"type": "OnDelete"}}, {"observedGeneration": 1})
    for verdict in (daemonset_verdict(on_delete), statefulset_verdict(on_delete)):
        assert verdict.error == "rollout status is only available for RollingUpdate strategy type"


def test_statefulset_verdicts() -> None:
    spec = {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}}
    assert statefulset_verdict(_obj(2, spec, {"observedGeneration": 1})).message == (
        "Waiting for statefulset spec update to be observed..."
    )
    status = {"observedGeneration": 1, "readyReplicas": 2, "updatedReplicas": 0}
    assert statefulset_verdict(_obj(1, spec, status)).message == "Waiting for 1 pods to be ready..."
    status |= {"readyReplicas": 3, "updatedReplicas": 1}
    verdict = statefulset_verdict(_obj(1, spec, status))
    assert (verdict.message, verdict.done) == (
        "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...",
        False,
    )
    status |= {"updatedReplicas": 2}
    verdict = statefulset_verdict(_obj(1, spec, status))
    assert (verdict.message, verdict.done) == (
        "partitioned roll out complete: 2 new pods have been updated...",
        True,
    )
    no_rolling = {"replicas": 3, "updateStrategy": {"type": "RollingUpdate"}}
    status |= {"currentRevision": "x-1", "updateRevision": "x-2"}
    assert statefulset_verdict(_obj(1, no_rolling, status)).message == (
        "waiting for statefulset rolling update to complete 2 pods at revision x-2..."
    )


def test_advanced_statefulset_verdicts_check_the_partition_first() -> None:
    spec = {"replicas": 4, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}}
    unobserved = _obj(2, spec, {"observedGeneration": 1, "updatedReplicas": 1})
    assert advanced_statefulset_verdict(unobserved).message == (
        "Waiting for partitioned roll out to finish:1 out of 3 new pods has been updated..."
    )
    status = {"observedGeneration": 1, "updatedReplicas": 3, "readyReplicas": 3}
    assert advanced_statefulset_verdict(_obj(2, spec, status)).message == (
        "Waiting for Advanced StatefulSet spec update to be observed..."
    )
    assert advanced_statefulset_verdict(_obj(1, spec, status)).message == "Waiting for 1 pods to be ready..."
    status |= {"readyReplicas": 4, "availableReplicas": 4, "updateRevision": "db-2"}
    verdict = advanced_statefulset_verdict(_obj(1, spec, status))
    assert (verdict.message, verdict.done) == (
        "Advanced StatefulSet rolling update complete 4 pods at revision db-2...",
        True,
    )
