"""Rollout webhook: the one-Rollout-per-workload conflict, immutability on update, and what
upstream's webhook says about each upstream example."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from kruise.rollouts.admission import aggregate, default_rollout, validate_rollout
from kruise.rollouts.api import Rollout
from kruise.rollouts.api.conversion import convert_object
from tests.conformance.upstream_readme import Findings, static_findings, without
from tests.unit.rollouts.helpers import CORPUS, load, upstream_examples, v1alpha1_rollout, v1beta1_rollout

STYLE = "rollouts.kruise.io/rolling-style"


def named(doc: dict[str, Any], name: str, namespace: str = "shop") -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["metadata"] = {"name": name, "namespace": namespace}
    return out


# --- conflict -----------------------------------------------------------------------------------


def test_a_second_rollout_for_the_same_workload_is_refused() -> None:
    others = [named(v1beta1_rollout(), "other"), named(v1beta1_rollout(), "third")]
    assert aggregate(validate_rollout(v1beta1_rollout(), workload_lookup=others)) == (
        'Conflict Checker: Invalid value: "demo": This rollout conflict with Rollout(shop/other), '
        "one workload only have less than one Rollout"
    )


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(named(v1beta1_rollout(), "demo"), id="itself"),
        pytest.param(named(v1beta1_rollout(), "other", "elsewhere"), id="another namespace"),
        pytest.param(
            {
                **named(v1beta1_rollout(), "other"),
                "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}},
            },
            id="another workload",
        ),
        pytest.param(
            {
                **named(v1beta1_rollout(), "other"),
                "spec": {"workloadRef": {"apiVersion": "apps/v2", "kind": "Deployment", "name": "web"}},
            },
            id="apiVersion is part of the identity",
        ),
    ],
)
def test_no_conflict(other: dict[str, Any]) -> None:
    assert validate_rollout(v1beta1_rollout(), workload_lookup=[other]) == []


def test_conflicts_across_versions_and_with_spec_errors() -> None:
    alpha_other = named(v1alpha1_rollout(), "old-style")
    assert [e.field for e in validate_rollout(v1beta1_rollout(), workload_lookup=[alpha_other])] == [
        "Conflict Checker"
    ]
    assert [
        e.field for e in validate_rollout(v1alpha1_rollout(), workload_lookup=[named(v1beta1_rollout(), "b")])
    ] == ["Conflict Checker"]
    bad = v1beta1_rollout(canary={"steps": [{"replicas": 0}]})
    fields = [e.field for e in validate_rollout(bad, workload_lookup=[named(v1beta1_rollout(), "b")])]
    assert fields == ["Spec.Strategy.Canary.Steps[0].Replicas", "Conflict Checker"]
    assert validate_rollout(
        v1beta1_rollout(), workload_lookup=[Rollout.from_dict(named(v1beta1_rollout(), "m"))]
    )


# --- immutability on update ---------------------------------------------------------------------


def with_phase(doc: dict[str, Any], phase: str) -> dict[str, Any]:
    return {**copy.deepcopy(doc), "status": {"phase": phase}}


def changed(mutate: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    doc = copy.deepcopy(base or v1beta1_rollout())
    mutate(doc)
    return doc


ROUTED = v1beta1_rollout(
    canary={
        "steps": [{"replicas": 1}, {"replicas": 2}],
        "trafficRoutings": [{"service": "s", "ingress": {"name": "i"}}],
    }
)
IMMUTABLE = [
    (
        "workload",
        lambda d: d["spec"]["workloadRef"].update(name="api"),
        "Spec.ObjectRef: Forbidden: Rollout 'ObjectRef' field is immutable",
    ),
    (
        "traffic routings",
        lambda d: d["spec"]["strategy"]["canary"]["trafficRoutings"][0].update(service="t"),
        "Spec.Strategy.Canary|BlueGreen.TrafficRoutings: Forbidden: Rollout "
        "'Strategy.Canary|BlueGreen.TrafficRoutings' field is immutable",
    ),
    (
        "rolling style",
        lambda d: d["spec"]["strategy"]["canary"].update(enableExtraWorkloadForCanary=True),
        "Spec.Strategy.Canary|BlueGreen: Forbidden: "
        "Rollout style and enableExtraWorkloadForCanary are immutable",
    ),
    (
        "number of steps",
        lambda d: d["spec"]["strategy"]["canary"]["steps"].append({"replicas": 3}),
        "Spec.Strategy.Canary|BlueGreen: Forbidden: Amount of Rollout steps are immutable",
    ),
]


@pytest.mark.parametrize(("what", "mutate", "error"), IMMUTABLE, ids=[i[0] for i in IMMUTABLE])
@pytest.mark.parametrize("phase", ["Progressing", "Terminating"])
def test_immutable_while_progressing_or_terminating(what: str, mutate: Any, error: str, phase: str) -> None:
    old = with_phase(ROUTED, phase)
    assert aggregate(validate_rollout(changed(mutate, ROUTED), old, workload_lookup=[])) == error


@pytest.mark.parametrize(("what", "mutate", "error"), IMMUTABLE, ids=[i[0] for i in IMMUTABLE])
@pytest.mark.parametrize("phase", ["Healthy", "Initial", "Disabled", None])
def test_mutable_otherwise(what: str, mutate: Any, error: str, phase: str | None) -> None:
    old = ROUTED if phase is None else with_phase(ROUTED, phase)
    assert validate_rollout(changed(mutate, ROUTED), old, workload_lookup=[]) == []


def test_step_edits_are_allowed_while_progressing() -> None:
    new = changed(
        lambda d: d["spec"]["strategy"]["canary"]["steps"][1].update(replicas=5, pause={"duration": 9}),
        ROUTED,
    )
    assert validate_rollout(new, with_phase(ROUTED, "Progressing"), workload_lookup=[]) == []


def test_the_stored_phase_gates_the_rules_and_spec_errors_come_first() -> None:
    new = changed(IMMUTABLE[0][1], ROUTED)
    assert validate_rollout(new, ROUTED, workload_lookup=[], latest=with_phase(ROUTED, "Progressing"))
    assert validate_rollout(new, with_phase(ROUTED, "Progressing"), workload_lookup=[], latest=ROUTED) == []
    broken = changed(lambda d: d["spec"]["strategy"]["canary"]["steps"].append({}), new)
    assert [
        e.detail for e in validate_rollout(broken, with_phase(ROUTED, "Progressing"), workload_lookup=[])
    ] == ["replicas cannot be empty"]


def test_v1alpha1_update_rules() -> None:
    old = with_phase(v1alpha1_rollout(), "Progressing")
    moved = changed(lambda d: d["spec"]["objectRef"]["workloadRef"].update(name="api"), v1alpha1_rollout())
    assert aggregate(validate_rollout(moved, old, workload_lookup=[])) == (
        "Spec.ObjectRef: Forbidden: Rollout 'ObjectRef' field is immutable"
    )
    routed = changed(
        lambda d: d["spec"]["strategy"]["canary"].update(
            trafficRoutings=[{"service": "s", "ingress": {"name": "i"}}]
        ),
        v1alpha1_rollout(),
    )
    assert aggregate(validate_rollout(routed, old, workload_lookup=[])) == (
        "Spec.Strategy.Canary.TrafficRoutings: Forbidden: "
        "Rollout 'Strategy.Canary.TrafficRoutings' field is immutable"
    )
    restyled = changed(
        lambda d: (
            d["metadata"].update(annotations={STYLE: "partition"}),
            d["spec"]["strategy"]["canary"].update(steps=[{"replicas": 1}]),
        ),
        v1alpha1_rollout(),
    )
    assert aggregate(validate_rollout(restyled, old, workload_lookup=[])) == (
        "Metadata.Annotation: Forbidden: Rollout 'Rolling-Style' annotation is immutable"
    )
    recased = with_phase(
        changed(lambda d: d["metadata"].update(annotations={STYLE: "canary"}), v1alpha1_rollout()),
        "Progressing",
    )
    same = changed(lambda d: d["metadata"].update(annotations={STYLE: "CANARY"}), v1alpha1_rollout())
    assert validate_rollout(same, recased, workload_lookup=[]) == []
    fewer = changed(lambda d: d["spec"]["strategy"]["canary"]["steps"].pop(), v1alpha1_rollout())
    assert validate_rollout(fewer, old, workload_lookup=[]) == []  # v1alpha1 does not check the step count


def test_old_object_of_the_other_version_is_converted() -> None:
    old = with_phase(v1alpha1_rollout(), "Progressing")
    new = convert_object(
        changed(lambda d: d["spec"]["objectRef"]["workloadRef"].update(name="api"), v1alpha1_rollout()),
        "rollouts.kruise.io/v1beta1",
    )
    assert [e.field for e in validate_rollout(new, old, workload_lookup=[])] == ["Spec.ObjectRef"]


# --- the upstream examples -----------------------------------------------------------------------

FINDINGS = static_findings(CORPUS.parent / "README.md")
# first error detail upstream's webhook answers for each example as its API server stores it
# (unknown fields pruned, CRD defaults applied); None = admitted
EXPECTED: dict[str, str | None] = {
    "001": "replicas cannot be empty",  # proposal text with pre-release field names
    "002": "replicas cannot be empty",
    "003": "replicas cannot be empty",
    "004": "replicas cannot be empty",
    "005": "replicas cannot be empty",
    "009": "For patition style rollout: step[x].weight must not greater than replicasLimitWithTraffic "
    "if replicas is not specified",  # a StatefulSet is partition style; weight 60 > 50
}


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in upstream_examples("Rollout")
        if not FINDINGS.get(f"kruise-rollouts/{p.parent.name}/{p.name}", Findings((), ())).schema
    ],
    ids=lambda p: str(p.relative_to(CORPUS)),
)
def test_upstream_examples_against_the_webhook(path: Path) -> None:
    findings = FINDINGS.get(f"kruise-rollouts/{path.parent.name}/{path.name}", Findings((), ()))
    doc = default_rollout(without(load(path), findings.unknown))
    errors = validate_rollout(doc, workload_lookup=[])
    expected = EXPECTED.get(path.name[:3])
    assert (errors[0].detail if errors else None) == expected
