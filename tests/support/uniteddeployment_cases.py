"""UnitedDeployment manifests upstream's validating webhook refuses, each with its exact message
(Appendix B, ``pkg/webhook/uniteddeployment``). Shared by the pure unit tests and the tests
through the real API server, so both prove the same texts."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import yaml

from tests.support.corpus import UPSTREAM_EXAMPLES

SAMPLE = UPSTREAM_EXAMPLES / "kruise" / "UnitedDeployment" / "002-uniteddeployment-sample.yaml"
"""Upstream's v1alpha1 sample: replicas 6 over subset-a (1), subset-b (50%) and subset-c (the rest),
from a StatefulSet template labelled ``app: foo``."""

Edit = Callable[[dict[str, Any]], None]

POD_TEMPLATE = {
    "metadata": {"labels": {"app": "foo"}},
    "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
}


def sample() -> dict[str, Any]:
    """A fresh copy of the sample, with a namespace-independent name."""
    doc: dict[str, Any] = yaml.safe_load(SAMPLE.read_text())
    return doc


def subsets(doc: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = doc["spec"]["topology"]["subsets"]
    return result


def _bounded(*bounds: dict[str, Any]) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        for subset, extra in zip(subsets(doc), bounds, strict=False):
            subset.pop("replicas", None)
            subset.update(extra)
        for subset in subsets(doc)[len(bounds) :]:
            subset.pop("replicas", None)

    return edit


def _template(kind: str, spec: dict[str, Any]) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        body = {"selector": {"matchLabels": {"app": "foo"}}, "template": copy.deepcopy(POD_TEMPLATE), **spec}
        doc["spec"]["template"] = {kind: {"metadata": {"labels": {"app": "foo"}}, "spec": body}}

    return edit


def _drop_replicas(doc: dict[str, Any]) -> None:
    del doc["spec"]["replicas"]


def _chain(*edits: Edit) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        for step in edits:
            step(doc)

    return edit


_ALL = "statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, or deploymentTemplate"

CREATE_CASES: list[tuple[str, Edit, str]] = [
    (
        "empty selector",
        lambda d: d["spec"].update(selector={}),
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset",
    ),
    (
        "duplicated subset name",
        lambda d: subsets(d)[1].update(name="subset-a"),
        'spec.topology.subsets[1].name: Invalid value: "subset-a": duplicated subset name subset-a',
    ),
    (
        "partition of a subset that does not exist",
        lambda d: d["spec"].update(
            updateStrategy={"manualUpdate": {"partitions": {"nope": 1, "subset-a": 0}}}
        ),
        'spec.updateStrategy.partitions: Invalid value: map[string]int32{"nope":1, "subset-a":0}: '
        "subset nope does not exist",
    ),
    (
        "minReplicas above maxReplicas",
        _bounded({"minReplicas": 3, "maxReplicas": 2}),
        "spec.topology.subsets[0].minReplicas: Invalid value: "
        'intstr.IntOrString{Type:0, IntVal:2, StrVal:""}: '
        "subset[0].minReplicas must be more than or equal to maxReplicas",
    ),
    (
        "replicas beside minReplicas",
        lambda d: subsets(d)[2].update(minReplicas=1),
        "subset.Replicas and subset.MinReplicas/subset.MaxReplicas are mutually exclusive in a "
        "UnitedDeployment",
    ),
    (
        "bounds without spec.replicas",
        _chain(_drop_replicas, _bounded({"minReplicas": 1})),
        "spec.topology.subsets: Invalid value: -1: "
        "spec.replicas must be not empty if you set subset.minReplicas/maxReplicas",
    ),
    (
        "every subset bounded",
        _bounded({"maxReplicas": 3}, {"maxReplicas": 3}, {"maxReplicas": 3}),
        "spec.topology.subsets: Invalid value: 3: at least one subset.maxReplicas must be empty",
    ),
    (
        "minimums above maximums",
        _bounded({"minReplicas": 5, "maxReplicas": 1}, {"maxReplicas": 1}, {"maxReplicas": 1}),
        "spec.topology.subsets: Invalid value: 5: "
        "sum of indicated subset.minReplicas should not be greater than sum of indicated subset.maxReplicas",
    ),
    (
        "specified replicas above spec.replicas",
        lambda d: subsets(d)[0].update(replicas=5),
        "spec.topology.subsets: Invalid value: 8: "
        "sum of indicated subset replicas 8 should not be greater than UnitedDeployment replicas 6",
    ),
    (
        "every subset specified, sum short",
        lambda d: subsets(d)[2].update(replicas=1),
        "spec.topology.subsets: Invalid value: 5: if replicas of all subsets are provided, the sum of "
        "indicated subset replicas 5 should equal UnitedDeployment replicas 6",
    ),
    (
        "no spec.replicas, a subset unspecified",
        _drop_replicas,
        "spec.topology.subsets: Invalid value: 1: "
        "if UnitedDeployment replicas is not provided, replicas of all subsets should be provided",
    ),
    (
        "no template",
        lambda d: d["spec"].update(template={}),
        f"spec.template: Required value: should provide one of {_ALL}",
    ),
    (
        "two templates",
        lambda d: d["spec"]["template"].update(
            cloneSetTemplate={"spec": {"selector": {"matchLabels": {"app": "foo"}}, "template": POD_TEMPLATE}}
        ),
        f"should provide only one of {_ALL}",
    ),
    (
        "selector does not match the template labels",
        lambda d: d["spec"]["template"]["statefulSetTemplate"]["metadata"].update(labels={"app": "bar"}),
        'spec.template.statefulSetTemplate.metadata.labels: Invalid value: map[string]string{"app":"bar"}: '
        "`selector` does not match template `labels`",
    ),
    (
        "replicas in statefulSetTemplate",
        lambda d: d["spec"]["template"]["statefulSetTemplate"]["spec"].update(replicas=3),
        "spec.template.statefulSetTemplate.spec.replicas: Invalid value: 3: "
        "replicas in statefulSetTemplate will not be used",
    ),
    (
        "partition in statefulSetTemplate",
        lambda d: d["spec"]["template"]["statefulSetTemplate"]["spec"].update(
            updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
        ),
        "spec.template.statefulSetTemplate.spec.updateStrategy.rollingUpdate.partition: Invalid value: 2: "
        "partition in statefulSetTemplate will not be used",
    ),
    (
        "replicas in advancedStatefulSetTemplate",
        _template("advancedStatefulSetTemplate", {"replicas": 2}),
        "spec.template.advancedStatefulSetTemplate.spec.replicas: Invalid value: 2: "
        "replicas in advancedStatefulSetTemplate will not be used",
    ),
    (
        "partition in advancedStatefulSetTemplate",
        _template(
            "advancedStatefulSetTemplate",
            {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}},
        ),
        "spec.template.advancedStatefulSetTemplate.spec.updateStrategy.rollingUpdate.partition: "
        "Invalid value: 1: partition in advancedStatefulSetTemplate will not be used",
    ),
    (
        "replicas in deploymentTemplate",
        _template("deploymentTemplate", {"replicas": 4}),
        "spec.template.deploymentTemplate.spec.replicas: Invalid value: 4: "
        "replicas in deploymentTemplate will not be used",
    ),
]
"""``(id, edit of the sample, the message the refusal contains)``."""

UPDATE_CASES: list[tuple[str, Edit, str]] = [
    (
        "a kept subset's nodeSelectorTerm",
        lambda d: subsets(d)[0]["nodeSelectorTerm"]["matchExpressions"][0].update(values=["zone-x"]),
        "spec.topology.subsets[0].nodeSelectorTerm: Forbidden: may not be changed in an update",
    ),
    (
        "a kept subset's tolerations",
        lambda d: subsets(d)[1].update(
            tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
        ),
        "spec.topology.subsets[1].tolerations: Forbidden: may not be changed in an update",
    ),
    (
        "statefulSetTemplate's serviceName",
        lambda d: d["spec"]["template"]["statefulSetTemplate"]["spec"].update(serviceName="other"),
        "spec.template.statefulSetTemplate.spec: Forbidden: updates to statefulsetTemplate spec for fields "
        "other than 'template', and 'updateStrategy' are forbidden",
    ),
]
"""``(id, edit of the stored sample, the message)`` for UPDATEs."""
