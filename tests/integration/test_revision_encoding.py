"""One pod template is one ControllerRevision, however the stored template is encoded.

Upstream rule (``K:pkg/controller/cloneset/revision/cloneset_revision.go`` ``getPatch``, the
Advanced StatefulSet's and DaemonSet's ``getPatch`` alike): the revision data is the template
*as Go's client encodes the typed object* (``runtime.Encode``), which always writes
``metadata.creationTimestamp: null`` and each container's ``resources``; its FNV hash names the
revision. So a template stored with or without ``creationTimestamp: null`` is the same revision.

Found with upstream's ``kubectl-kruise rollout undo cloneset/NAME`` (kruise-tools), which writes a
revision's Go-encoded template back: with a hash of the template as stored, one template had two
revisions, the history held 3 revisions for 2 templates and ``undo`` rolled back to the same
image.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, CONTROLLER_REVISIONS, DAEMONSETS, STATEFULSETS, Resource
from kruise.workloads.revisions import template_of_revision
from tests.integration.cloneset.helpers import new_cloneset
from tests.integration.daemonset.helpers import new_daemonset
from tests.integration.statefulset.helpers import new_statefulset
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]
V2 = "nginx:1.27-alpine"
KINDS = [
    pytest.param(CLONESETS, lambda: new_cloneset("web", 2), id="CloneSet"),
    pytest.param(STATEFULSETS, lambda: new_statefulset("web", 2), id="AdvancedStatefulSet"),
    pytest.param(DAEMONSETS, lambda: new_daemonset("web", None), id="AdvancedDaemonSet"),
]


async def owned_revisions(kube: KubeClient, namespace: str, uid: str) -> list[JSON]:
    items = (await kube.list(CONTROLLER_REVISIONS, namespace))["items"]
    owned = [r for r in items if any(o.get("uid") == uid for o in r["metadata"].get("ownerReferences") or [])]
    return sorted(owned, key=lambda r: int(r["revision"]))


async def observed(kube: KubeClient, res: Resource, namespace: str) -> JSON:
    async def probe() -> JSON | None:
        obj = await kube.get(res, "web", namespace)
        st = obj.get("status") or {}
        done = st.get("observedGeneration") == obj["metadata"]["generation"] and _update_revision(st)
        return obj if done else None

    return await eventually(probe, timeout=30, what=f"{res.kind} web observed")


def _update_revision(st: JSON) -> str:
    return str(st.get("updateRevision") or st.get("daemonSetHash") or "")


def revision_of(obj: JSON) -> str:
    """The update revision's name (a DaemonSet reports only the hash, ``status.daemonSetHash``)."""
    value = _update_revision(obj["status"])
    return value if value.startswith("web-") else f"web-{value}"


@pytest.mark.parametrize(("res", "build"), KINDS)
async def test_kubectl_kruise_rollout_undo_restores_a_revision_without_a_new_one(
    kube: KubeClient, namespace: str, res: Resource, build: Any
) -> None:
    """``kubectl-kruise rollout undo <kind>/NAME``: writing back a revision's template, encoded
    with or without ``metadata.creationTimestamp: null``, makes that revision the newest again
    (its ``.revision`` bumped) instead of creating another one."""
    created = await kube.create(res, build(), namespace)
    uid = created["metadata"]["uid"]
    first = revision_of(await observed(kube, res, namespace))

    # the same template stored without the Go-encoding artifact: still the same revision
    strip = {"spec": {"template": {"metadata": {"creationTimestamp": None}}}}
    await kube.patch(res, "web", strip, namespace, patch_type="merge")
    stored = await observed(kube, res, namespace)
    assert "creationTimestamp" not in stored["spec"]["template"]["metadata"], "the test needs it stripped"
    assert revision_of(stored) == first
    assert [r["metadata"]["name"] for r in await owned_revisions(kube, namespace, uid)] == [first]

    # a second template, then the first written back as kubectl-kruise's undo writes it
    image = {
        "spec": {
            "template": {
                "spec": {"containers": [{**stored["spec"]["template"]["spec"]["containers"][0], "image": V2}]}
            }
        }
    }
    await kube.patch(res, "web", image, namespace, patch_type="merge")
    second = revision_of(await observed(kube, res, namespace))
    assert second != first
    (rev1, _) = await owned_revisions(kube, namespace, uid)
    assert template_of_revision(rev1)["metadata"]["creationTimestamp"] is None, "Go-encoded, as upstream"
    undo = {"spec": {"template": template_of_revision(rev1)}}
    await kube.patch(res, "web", undo, namespace, patch_type="merge")
    back = await observed(kube, res, namespace)
    assert back["spec"]["template"]["spec"]["containers"][0]["image"] != V2
    assert revision_of(back) == first
    history = await owned_revisions(kube, namespace, uid)
    assert [(r["metadata"]["name"], r["revision"]) for r in history] == [(second, 2), (first, 3)]
