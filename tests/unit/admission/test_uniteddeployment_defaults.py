"""UnitedDeployment defaulting (``SetDefaultsUnitedDeployment``), pure."""

from __future__ import annotations

from kruise.workloads.admission.uniteddeployment_defaults import default_uniteddeployment
from tests.support.uniteddeployment_cases import sample, subsets


def test_history_strategy_and_pod_template_defaults_on_create() -> None:
    doc = sample()
    out = default_uniteddeployment(doc, old=None)
    spec = out["spec"]
    assert spec["revisionHistoryLimit"] == 10  # the sample sets it already
    assert spec["updateStrategy"] == {"type": "Manual", "manualUpdate": {}}
    pod_spec = spec["template"]["statefulSetTemplate"]["spec"]["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always"
    assert pod_spec["containers"][0]["imagePullPolicy"] == "Always"  # image "nginx" has no tag
    assert doc == sample(), "the input is not modified"


def test_unchanged_template_is_not_defaulted_again_on_update() -> None:
    old = sample()
    new = sample()
    new["spec"]["replicas"] = 9
    out = default_uniteddeployment(new, old=old)
    assert "restartPolicy" not in out["spec"]["template"]["statefulSetTemplate"]["spec"]["template"]["spec"]
    assert (
        default_uniteddeployment(sample(), old=None, template_no_defaults=True)["spec"]["template"]
        == (sample()["spec"]["template"])
    )


def test_unset_min_replicas_become_zero_with_bounds_only() -> None:
    doc = sample()
    for subset in subsets(doc):
        subset.pop("replicas", None)
    subsets(doc)[0]["maxReplicas"] = 2
    out = default_uniteddeployment(doc, old=None)
    assert [s.get("minReplicas") for s in subsets(out)] == [0, 0, 0]
    # with a subset's replicas set, bounds are left alone (validation refuses the mix)
    subsets(doc)[1]["replicas"] = 1
    assert [s.get("minReplicas") for s in subsets(default_uniteddeployment(doc, old=None))] == [None] * 3


def test_an_explicit_strategy_is_kept() -> None:
    doc = sample()
    doc["spec"]["updateStrategy"] = {"type": "Manual", "manualUpdate": {"partitions": {"subset-a": 1}}}
    doc["spec"]["revisionHistoryLimit"] = 3
    out = default_uniteddeployment(doc, old=None)
    assert out["spec"]["updateStrategy"] == {
        "type": "Manual",
        "manualUpdate": {"partitions": {"subset-a": 1}},
    }
    assert out["spec"]["revisionHistoryLimit"] == 3
