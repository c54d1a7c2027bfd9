"""WorkloadSpread validating webhook rules: upstream's messages (Appendix B), upstream's paths."""

from __future__ import annotations

from typing import Any

from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.workloadspread.validation import validate_ws
from kruise.workloads.workloadspread.whitelist import parse_whitelist

DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
ZONE_A = {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}


def _ws(
    name: str = "ws", target: dict[str, str] | None = None, subsets: Any = None, **spec: Any
) -> dict[str, Any]:
    if subsets is None:
        subsets = [{"name": "a", "requiredNodeSelectorTerm": ZONE_A, "maxReplicas": 2}, {"name": "b"}]
    return {"metadata": {"name": name}, "spec": {"targetRef": target or DEPLOY, "subsets": subsets, **spec}}


def _msg(ws: dict[str, Any], old: dict[str, Any] | None = None, others: Any = ()) -> str:
    return aggregate(validate_ws(ws, old, list(others)))  # type: ignore[arg-type]


def test_valid_two_zones() -> None:
    assert _msg(_ws()) == ""
    assert (
        _msg(_ws(target={"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "s"})) == ""
    )
    assert _msg(_ws(target={"apiVersion": "batch/v1", "kind": "Job", "name": "j"})) == ""


def test_target_kind_and_group() -> None:
    bad = {"apiVersion": "apps/v1", "kind": "CloneSet", "name": "c"}
    assert _msg(_ws(target=bad)) == (
        'spec.targetRef: Invalid value: v1alpha1.TargetReference{APIVersion:"apps/v1", Kind:"CloneSet", '
        'Name:"c"}: TargetReference is not valid for CloneSet.'
    )
    other = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d"}
    assert _msg(_ws(target=other)).endswith("TargetReference's GroupKind is not permitted.")
    empty = {"apiVersion": "apps/v1", "kind": "Deployment", "name": ""}
    assert _msg(_ws(target=empty)).endswith("empty TargetReference is not valid for WorkloadSpread.")


def test_subsets_required_and_unique() -> None:
    assert _msg(_ws(subsets=[])) == "spec.subsets: Required value: subsets number must >= 1 in WorkloadSpread"
    dup = [{"name": "a"}, {"name": "a"}]
    assert _msg(_ws(subsets=dup)) == 'spec.subsets[1].name: Invalid value: "a": duplicated subset name a'


def test_max_replicas_rules() -> None:
    mixed = [{"name": "a", "maxReplicas": 1}, {"name": "b", "maxReplicas": "50%"}]
    assert _msg(_ws(subsets=mixed)).endswith("the maxReplicas type of all subsets must be the same")
    over = [{"name": "a", "maxReplicas": "60%"}, {"name": "b", "maxReplicas": "50%"}]
    assert _msg(_ws(subsets=over)) == (
        'spec.subsets[1].maxReplicas: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"50%"}: '
        "the sum of all subset's maxReplicas exceeds 100% is no permitted"
    )
    under = [{"name": "a", "maxReplicas": "30%"}, {"name": "b", "maxReplicas": "50%"}]
    assert _msg(_ws(subsets=under)).endswith(
        "maxReplicas sum of all subsets must equal 100% when type is specified as percent"
    )
    assert _msg(_ws(subsets=[{"name": "a", "maxReplicas": "30%"}, {"name": "b"}])) == ""
    negative = [{"name": "a", "maxReplicas": -1}, {"name": "b"}]
    assert _msg(_ws(subsets=negative)).endswith("maxReplicas is not valid for subset")
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s"}
    assert _msg(_ws(target=sts, subsets=[{"name": "a", "maxReplicas": "50%"}, {"name": "b"}])).endswith(
        "the maxReplicas type must be Int for StatefulSet"
    )


def test_schedule_strategy() -> None:
    assert _msg(_ws(scheduleStrategy={"type": "Other"})) == (
        'spec.scheduleStrategy.type: Invalid value: "Other": ScheduleStrategy\'s type is not valid'
    )
    fixed_adaptive = {"type": "Fixed", "adaptive": {"rescheduleCriticalSeconds": 10}}
    assert _msg(_ws(scheduleStrategy=fixed_adaptive)) == (
        "spec.scheduleStrategy.type: Invalid value: 10: the scheduleStrategy's type must be adaptive when "
        "using adaptive scheduleStrategy"
    )
    capped_last = [{"name": "a", "maxReplicas": 1}, {"name": "b", "maxReplicas": 1}]
    adaptive = {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 10}}
    assert _msg(_ws(subsets=capped_last, scheduleStrategy=adaptive)).endswith(
        "the last subset's maxReplicas must be not specified when using adaptive scheduleStrategy"
    )
    too_long = {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 296}}
    assert _msg(_ws(scheduleStrategy=too_long)).endswith(
        "rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > 295 is not permitted"
    )
    assert (
        _msg(_ws(scheduleStrategy={"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 295}})) == ""
    )


def test_update_and_conflict() -> None:
    moved = _ws(target={"apiVersion": "apps/v1", "kind": "Deployment", "name": "other"})
    assert _msg(moved, old=_ws()).endswith("change TargetReference is not permitted for WorkloadSpread")
    assert _msg(_ws(target={**DEPLOY, "apiVersion": "apps/v1beta1"}), old=_ws()) == ""
    assert _msg(_ws(name="second"), others=[_ws(name="first")]).endswith(
        "ws.spec.targetRef is in conflict with other WorkloadSpread first"
    )
    assert _msg(_ws(), others=[_ws()]) == ""


def test_target_filter_selector_must_convert() -> None:
    ws = _ws()
    ws["spec"]["targetFilter"] = {"selector": {"matchExpressions": [{"key": "a", "operator": "Foo"}]}}
    message = _msg(ws)
    assert message.startswith("spec.targetFilter: Invalid value: ")
    assert message.endswith('"Foo" is not a valid label selector operator')
    ws["spec"]["targetFilter"] = {"selector": {"matchLabels": {"app": "web"}}, "replicasPathList": ["spec.x"]}
    assert _msg(ws) == ""
    ws["spec"]["targetFilter"] = {"replicasPathList": ["spec.x"]}  # no selector: valid (selects nothing)
    assert _msg(ws) == ""


def test_white_listed_custom_kinds_are_permitted() -> None:
    """Upstream's default branch: a kind not built in is admitted when the custom white list has
    its group and kind (any version); a white list that could not be read is an internal error."""
    custom = parse_whitelist(
        '{"workloads": [{"Group": "kubeflow.org", "Version": "v1", "Kind": "TFJob"},'
        ' {"group": "apps.kruise.io", "kind": "DaemonSet"}]}'
    )
    tfjob = _ws(target={"apiVersion": "kubeflow.org/v1beta9", "kind": "TFJob", "name": "t"})
    ads = _ws(target={"apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet", "name": "d"})
    assert aggregate(validate_ws(tfjob, None, [], custom)) == ""  # type: ignore[arg-type]
    assert aggregate(validate_ws(ads, None, [], custom)) == ""  # type: ignore[arg-type]
    native = _ws(target={"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d"})
    assert aggregate(validate_ws(native, None, [], custom)).endswith(  # type: ignore[arg-type]
        "TargetReference's GroupKind is not permitted."
    )
    assert aggregate(validate_ws(tfjob, None, [], "boom")) == "spec.targetRef: Internal error: boom"  # type: ignore[arg-type]
