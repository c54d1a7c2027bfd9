"""SidecarSet defaults and validation: upstream's messages (Appendix B), table by table."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.sidecarset import PatchWhitelist, SidecarSetContext, validate_sidecarset
from kruise.workloads.admission.sidecarset_conflicts import is_selector_overlapping
from kruise.workloads.admission.sidecarset_defaults import default_sidecarset

JSON = dict[str, Any]


def obj(name: str = "log", **spec: Any) -> JSON:
    body: JSON = {
        "selector": {"matchLabels": {"app": "web"}},
        "containers": [{"name": "sidecar", "image": "b:1"}],
    }
    body.update(spec)
    return default_sidecarset(
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "SidecarSet",
            "metadata": {"name": name},
            "spec": body,
        }
    )


def errors(o: JSON, old: JSON | None = None, context: SidecarSetContext | None = None) -> str:
    return aggregate(validate_sidecarset(o, old, context or SidecarSetContext()))


def test_defaults() -> None:
    out = obj(
        initContainers=[{"name": "init", "image": "i:1"}], patchPodMetadata=[{"annotations": {"a": "b"}}]
    )
    spec = out["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "maxUnavailable": 1, "partition": 0}
    assert spec["revisionHistoryLimit"] == 10
    sidecar, init = spec["containers"][0], spec["initContainers"][0]
    assert (
        sidecar["podInjectPolicy"] == "BeforeAppContainer" and init["podInjectPolicy"] == "AfterAppContainer"
    )
    assert sidecar["upgradeStrategy"] == {"upgradeType": "ColdUpgrade"}
    assert sidecar["shareVolumePolicy"] == {"type": "disabled"}
    assert sidecar["terminationMessagePath"] == "/dev/termination-log"
    assert sidecar["imagePullPolicy"] == "IfNotPresent"
    assert spec["patchPodMetadata"][0]["patchPolicy"] == "Retain"
    revision = default_sidecarset({"spec": {"injectionStrategy": {"revision": {"revisionName": "x"}}}})
    assert revision["spec"]["injectionStrategy"]["revision"]["policy"] == "Always"


def test_a_valid_sidecarset_passes() -> None:
    assert errors(obj()) == ""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            {"selector": None},
            "spec.selector: Required value: no selector defined for SidecarSet",
            id="no-selector",
        ),
        pytest.param(
            {"selector": {}},
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: "
            "empty selector is not valid for sidecarset.",
            id="empty-selector",
        ),
        pytest.param(
            {"namespace": "a", "namespaceSelector": {"matchLabels": {"x": "y"}}},
            "spec.namespace, namespaceSelector: Required value: "
            "namespace and namespaceSelector are mutually exclusive",
            id="namespace-and-selector",
        ),
        pytest.param(
            {"containers": []},
            "spec: Required value: no initContainer or container defined for SidecarSet",
            id="no-containers",
        ),
        pytest.param(
            {"containers": [{"name": "s", "image": "b", "podInjectPolicy": "Middle"}]},
            'spec.container.podInjectPolicy: Invalid value: "Middle": unsupported pod inject policy',
            id="inject-policy",
        ),
        pytest.param(
            {"containers": [{"name": "s", "image": "b", "shareVolumePolicy": {"type": "sometimes"}}]},
            'spec.container.shareVolumePolicy: Invalid value: v1alpha1.ShareVolumePolicy{Type:"sometimes"}: '
            "unsupported share volume policy",
            id="share-policy",
        ),
        pytest.param(
            {
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "partition": 1,
                    "selector": {"matchLabels": {"a": "b"}},
                }
            },
            "Partition and Selector cannot be used together",
            id="partition-and-selector",
        ),
        pytest.param(
            {"initContainers": [{"name": "i", "image": "i", "restartPolicy": "Always"}]},
            "spec.updateStrategy: Required value: "
            "The initContainer in-place upgrade is not currently supported.",
            id="native-sidecar-rolling",
        ),
        pytest.param(
            {"injectionStrategy": {"revision": {"policy": "Always"}}},
            "revisionName and customVersion cannot be empty simultaneously",
            id="revision-empty",
        ),
        pytest.param(
            {"patchPodMetadata": [{"annotations": {}, "patchPolicy": "Retain"}]},
            "spec.patchPodMetadata: Required value: no annotations defined for SidecarSet",
            id="patch-no-annotations",
        ),
        pytest.param(
            {"patchPodMetadata": [{"annotations": {"k": "1"}}, {"annotations": {"k": "2"}}]},
            "spec.patchPodMetadata: Required value: patch annotation[k] already exist",
            id="patch-duplicate",
        ),
        pytest.param(
            {"updateStrategy": {"type": "RollingUpdate", "maxUnavailable": "ten"}},
            "spec.updateStrategy.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, "
            "StrVal:\"ten\"}: a valid percent string must be a numeric string followed by an ending '%'",
            id="max-unavailable",
        ),
    ],
)
def test_refused(change: JSON, message: str) -> None:
    o = obj()
    for key, value in change.items():
        if value is None:
            o["spec"].pop(key)
        else:
            o["spec"][key] = copy.deepcopy(value)
    o = default_sidecarset(o)
    allowed = PatchWhitelist(defaults_allowed=True)
    assert message in errors(o, context=SidecarSetContext(whitelist=allowed))


def test_bad_name() -> None:
    assert "sidecarset name must consist of alphanumeric characters or '-'" in errors(obj("a.b"))


def test_missing_revision() -> None:
    o = obj(injectionStrategy={"revision": {"revisionName": "gone"}})
    context = SidecarSetContext(revision_error=lambda _: 'controllerrevisions.apps "gone" not found')
    assert errors(o, context=context) == (
        'revision: Invalid value: "null": Cannot find specific ControllerRevision, err: '
        'controllerrevisions.apps "gone" not found'
    )


def test_patch_metadata_needs_the_whitelist_unless_the_gate_allows_defaults() -> None:
    o = obj(patchPodMetadata=[{"annotations": {"oom-score": "1"}}])
    assert "SidecarSet patch metadata whitelist not found" in errors(o)
    assert errors(o, context=SidecarSetContext(whitelist=PatchWhitelist(defaults_allowed=True))) == ""
    rules = [{"allowedAnnotationKeyExprs": ["^oom-.*"]}]
    assert errors(o, context=SidecarSetContext(whitelist=PatchWhitelist(rules=rules))) == ""
    other = [{"allowedAnnotationKeyExprs": ["^cpu-.*"]}]
    assert "sidecarSet patch metadata annotation(oom-score) is not allowed" in errors(
        o, context=SidecarSetContext(whitelist=PatchWhitelist(rules=other))
    )


def test_update_may_neither_add_containers_nor_change_upgrade_type() -> None:
    old = obj()
    new = obj(containers=[{"name": "sidecar", "image": "b:2"}, {"name": "extra", "image": "e"}])
    assert 'spec.containers.name: Invalid value: "extra": container extra is not found' in errors(new, old)
    hot = obj(
        containers=[
            {
                "name": "sidecar",
                "image": "b",
                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "e"},
            }
        ]
    )
    assert "container sidecar upgradeType is immutable" in errors(hot, old)


def test_conflicting_container_in_an_overlapping_sidecarset() -> None:
    other = obj("other")
    context = SidecarSetContext(others=[other])
    assert errors(obj(), context=context) == (
        'spec.containers: Invalid value: "sidecar": container sidecar already exist in other'
    )
    disjoint = obj(selector={"matchLabels": {"app": "db"}})
    assert errors(disjoint, context=context) == ""
    elsewhere = obj(namespace="b")
    assert errors(elsewhere, context=SidecarSetContext(others=[obj("other", namespace="a")])) == ""


def test_volume_and_annotation_conflicts() -> None:
    other = obj(
        "other",
        containers=[{"name": "x", "image": "x"}],
        volumes=[{"name": "v", "emptyDir": {}}],
        patchPodMetadata=[{"annotations": {"k": "1"}, "patchPolicy": "Overwrite"}],
    )
    mine = obj(
        volumes=[{"name": "v", "hostPath": {"path": "/"}}],
        patchPodMetadata=[{"annotations": {"k": "2"}, "patchPolicy": "MergePatchJson"}],
    )
    context = SidecarSetContext(others=[other], whitelist=PatchWhitelist(defaults_allowed=True))
    text = errors(mine, context=context)
    assert "volume v is in conflict with sidecarset other" in text
    assert "annotation k is in conflict with sidecarset other" in text
    same = obj(volumes=[{"name": "v", "emptyDir": {}}])
    assert errors(same, context=context) == ""


@pytest.mark.parametrize(
    ("first", "second", "overlap"),
    [
        ({"matchLabels": {"a": "b"}}, {"matchLabels": {"c": "d"}}, True),
        ({"matchLabels": {"a": "b"}}, {"matchLabels": {"a": "c"}}, False),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b", "c"]}]},
            {"matchLabels": {"a": "c"}},
            True,
        ),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"matchLabels": {"a": "z"}}, True),
        (
            {"matchLabels": {"a": "b"}},
            {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]},
            False,
        ),
        (
            {"matchLabels": {"a": "b"}},
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["b"]}]},
            False,
        ),
    ],
)
def test_selector_overlap(first: JSON, second: JSON, overlap: bool) -> None:
    assert is_selector_overlapping(first, second) is overlap
