"""UnitedDeployment validation, pure: every upstream message (the shared case table), the sample
admitted, and the rules' edges (Go formatting of values, dry-run verdicts moved onto subsets)."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.uniteddeployment import (
    pod_template_base,
    validate_uniteddeployment_create,
    validate_uniteddeployment_delete,
    validate_uniteddeployment_update,
)
from kruise.workloads.admission.uniteddeployment_topology import (
    subset_scheduling_errors,
    subset_scheduling_pod,
)
from tests.support.uniteddeployment_cases import CREATE_CASES, UPDATE_CASES, Edit, sample, subsets


def placed(doc: dict[str, Any]) -> dict[str, Any]:
    doc["metadata"]["namespace"] = "ns"
    return doc


def test_upstream_sample_is_admitted() -> None:
    assert validate_uniteddeployment_create(placed(sample())) == []


@pytest.mark.parametrize(("edit", "message"), [pytest.param(e, m, id=i) for i, e, m in CREATE_CASES])
def test_create_refusals_carry_upstream_messages(edit: Edit, message: str) -> None:
    doc = placed(sample())
    edit(doc)
    assert message in aggregate(validate_uniteddeployment_create(doc))


@pytest.mark.parametrize(("edit", "message"), [pytest.param(e, m, id=i) for i, e, m in UPDATE_CASES])
def test_update_refusals_carry_upstream_messages(edit: Edit, message: str) -> None:
    old = placed(sample())
    new = placed(sample())
    edit(new)
    assert validate_uniteddeployment_create(new) == []  # only the update rule refuses it
    assert message in aggregate(validate_uniteddeployment_update(new, old))


def test_a_new_subset_may_bring_its_own_node_selector() -> None:
    old = placed(sample())
    new = placed(sample())
    subsets(new)[2].update(name="subset-d", tolerations=[{"key": "k", "operator": "Exists"}])
    assert validate_uniteddeployment_update(new, old) == []


def test_tolerations_changed_are_reported_once() -> None:
    old = placed(sample())
    new = placed(sample())
    subsets(new)[0]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    text = aggregate(validate_uniteddeployment_update(new, old))
    assert text == "spec.topology.subsets[0].tolerations: Forbidden: may not be changed in an update"


def test_advanced_statefulset_template_labels_are_reported_at_upstreams_path() -> None:
    doc = placed(sample())
    template = doc["spec"]["template"].pop("statefulSetTemplate")
    template["metadata"]["labels"] = {"app": "bar"}
    doc["spec"]["template"]["advancedStatefulSetTemplate"] = template
    assert aggregate(validate_uniteddeployment_create(doc)) == (
        'spec.template.statefulSetTemplate.metadata.labels: Invalid value: map[string]string{"app":"bar"}: '
        "`selector` does not match template `labels`"
    )


def test_partition_without_an_explicit_rolling_update_type_is_left_alone() -> None:
    doc = placed(sample())
    doc["spec"]["template"]["statefulSetTemplate"]["spec"]["updateStrategy"] = {
        "rollingUpdate": {"partition": 2}
    }
    assert validate_uniteddeployment_create(doc) == []


def test_clone_set_template_labels_are_not_checked() -> None:
    doc = placed(sample())
    doc["spec"]["template"] = {
        "cloneSetTemplate": {
            "metadata": {"labels": {"other": "x"}},
            "spec": {
                "selector": {"matchLabels": {"app": "foo"}},
                "template": {"metadata": {"labels": {"app": "foo"}}},
            },
        }
    }
    assert validate_uniteddeployment_create(doc) == []
    assert pod_template_base(doc) is None


def test_bad_percentages_report_upstreams_texts() -> None:
    doc = placed(sample())
    subsets(doc)[1]["replicas"] = "150%"
    assert (
        "spec.topology.subsets[1].replicas: Invalid value: "
        'intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: '
        "subset replicas (150%) should be in range [0, 100]"
    ) in aggregate(validate_uniteddeployment_create(doc))


def test_bad_subset_name() -> None:
    doc = placed(sample())
    subsets(doc)[0]["name"] = "Subset_A"
    text = aggregate(validate_uniteddeployment_create(doc))
    assert (
        'spec.topology.subsets[0].name: Invalid value: "Subset_A": '
        "invalid subset name a lowercase RFC 1123 label" in text
    )


def test_template_and_topology_verdicts_are_part_of_the_answer() -> None:
    doc = placed(sample())
    verdict = subset_scheduling_errors(
        422,
        {
            "reason": "Invalid",
            "details": {
                "kind": "Pod",
                "causes": [
                    {
                        "reason": "FieldValueRequired",
                        "field": "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                        ".nodeSelectorTerms[0].matchExpressions[0].values",
                        "message": "Required value: must be specified when `operator` is 'In' or 'NotIn'",
                    },
                    {"reason": "FieldValueInvalid", "field": "spec.tolerations[0].operator", "message": "x"},
                    {"reason": "FieldValueInvalid", "field": "spec.containers[0].name", "message": "ignored"},
                ],
            },
        },
        2,
    )
    assert [e.error() for e in verdict] == [
        "spec.topology.subsets[2].nodeSelectorTerm.matchExpressions[0].values: Required value: must be "
        "specified when `operator` is 'In' or 'NotIn'",
        "spec.topology.subsets[2].tolerations[0].operator: x",
    ]
    assert validate_uniteddeployment_create(doc, topology_errors=verdict)[-2:] == verdict
    assert subset_scheduling_errors(403, {"reason": "Forbidden"}, 0) == []


def test_scheduling_pod_carries_term_and_tolerations() -> None:
    subset = subsets(sample())[0]
    pod = subset_scheduling_pod({**subset, "tolerations": [{"operator": "Exists"}]}, "ns")
    assert pod is not None
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == {"nodeSelectorTerms": [subset["nodeSelectorTerm"]]}
    assert pod["spec"]["tolerations"] == [{"operator": "Exists"}]
    assert subset_scheduling_pod({"name": "plain"}, "ns") is None


@pytest.mark.parametrize(
    ("label", "replicas", "expected"),
    [
        (
            "Always",
            6,
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always",
        ),
        (
            "Cascading",
            6,
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading "
            "and replicas 6>0",
        ),
        ("Cascading", 0, None),
    ],
)
def test_deletion_protection(label: str, replicas: int, expected: str | None) -> None:
    doc = sample()
    doc["metadata"]["labels"]["policy.kruise.io/delete-protection"] = label
    doc["spec"]["replicas"] = replicas
    assert validate_uniteddeployment_delete(doc, gate_enabled=True) == expected
    assert validate_uniteddeployment_delete(doc, gate_enabled=False) is None
