"""ControllerRevisions of a workload: data, hash names, equality, rollbacks and history limits.

CloneSet and Advanced StatefulSet record their templates the same way (upstream's CloneSet
``revision`` package and the StatefulSet's ``getPatch``/``newRevision``, both on
``k8s.io/kubernetes/pkg/controller/history``); the owner kind is passed in as a
:class:`ControllerKind`.

Revision data is the strategic-merge patch ``{"spec":{"template":{..., "$patch":"replace"}}}``
(``SetRevisionTemplate`` / ``getPatch``). Its name is ``<owner>-<hash>`` with upstream
``history.HashControllerRevision``: **FNV-1** 32-bit (Go ``fnv.New32``, not FNV-1a) over the
JSON bytes, then the decimal collision count if given, printed in decimal and mapped through
``rand.SafeEncodeString`` (alphabet ``bcdfghjklmnpqrstvwxz2456789``).

Upstream hashes ``json.Marshal`` of the template *after* a round trip through Go's typed
``PodTemplateSpec`` (``runtime.Encode(patchCodec, obj)`` in ``getPatch``), which always writes
``metadata.creationTimestamp: null`` and every container's ``resources`` (``{}`` at least) and
prints quantities canonically. The template is given that shape here too
(:func:`go_encoded_template`) before it is stored and hashed, so one template is one revision
whether or not the stored object carries those artifacts (a template written back by
``kubectl-kruise rollout undo`` from a revision does, one applied from a manifest may not), and
:func:`equal_revisions` compares revisions written before this rule in that shape as well, so
their names (and the pods labelled with them) stay valid. Marshalling is Go-style (sorted keys,
no spaces, ``<``/``>``/``&``/U+2028/U+2029 escaped). Not reproduced: Go's dropping of fields
unknown to its structs and of empty ``omitempty`` fields.
The CloneSet's ``kruise.io/cloneset-volumeclaimtemplate-hash`` annotation is not computed here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.workloads.admission.pod_defaults import add_marshal_artifacts
from kruise.workloads.objects import (
    KubeObject,
    annotations_of,
    creation_time,
    mapping,
    metadata,
    name,
    namespace,
    spec,
    status,
    uid,
)
from kruise.workloads.pods import revision_hash, short_hash

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
HASH_LABEL = "controller.kubernetes.io/hash"
DEFAULT_HISTORY_LIMIT = 10

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def go_json(value: Any) -> bytes:
    """Marshal like Go ``encoding/json`` on a ``map[string]interface{}`` tree.

    Sorted keys, compact separators, UTF-8 output, HTML-unsafe characters and the two JavaScript
    line terminators escaped as ``\\u003c``-style sequences.
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text.encode()


def fnv1_32(data: bytes, seed: int = _FNV32_OFFSET) -> int:
    """32-bit FNV-1 (multiply, then xor) of ``data``, continuing from ``seed``."""
    value = seed
    for byte in data:
        value = ((value * _FNV32_PRIME) & 0xFFFFFFFF) ^ byte
    return value


def safe_encode_string(text: str) -> str:
    """k8s ``rand.SafeEncodeString``: map each character to ``SAFE_ALPHABET[ord(c) % 27]``."""
    return "".join(SAFE_ALPHABET[ord(ch) % len(SAFE_ALPHABET)] for ch in text)


def go_encoded_template(template: Mapping[str, Any]) -> dict[str, Any]:
    """``template`` as Go's client encodes a typed ``PodTemplateSpec`` (a copy).

    ``metadata.creationTimestamp: null`` always, each init/regular/ephemeral container's
    ``resources`` at least ``{}``, quantities canonical (see
    :func:`~kruise.workloads.admission.pod_defaults.add_marshal_artifacts`).
    """
    return add_marshal_artifacts(template)


def revision_data(template: Mapping[str, Any]) -> dict[str, Any]:
    """The ControllerRevision ``data`` for a pod template.

    Shape: ``{"spec":{"template":{..., "$patch":"replace"}}}`` (``SetRevisionTemplate``), the
    template in :func:`go_encoded_template` form.
    """
    return {"spec": {"template": {**go_encoded_template(template), "$patch": "replace"}}}


def _comparable_data(data: Any) -> Any:
    """Revision ``data`` with a pod template in :func:`go_encoded_template` form (other data as is)."""
    template = (
        mapping(mapping(mapping(data).get("spec")).get("template")) if isinstance(data, Mapping) else {}
    )
    if not template:
        return data
    encoded = go_encoded_template({k: v for k, v in template.items() if k != "$patch"})
    if "$patch" in template:
        encoded["$patch"] = template["$patch"]
    return {**data, "spec": {**mapping(data.get("spec")), "template": encoded}}


def hash_revision_data(data: Mapping[str, Any] | bytes, collision_count: int | None = None) -> str:
    """``HashControllerRevision``: safe-encoded FNV-1 of the data bytes plus the collision count."""
    raw = data if isinstance(data, bytes) else go_json(data)
    value = fnv1_32(raw)
    if collision_count is not None:
        value = fnv1_32(str(collision_count).encode(), value)
    return safe_encode_string(str(value))


def revision_name(parent_name: str, hash_value: str) -> str:
    """``<parent>-<hash>``, the parent truncated to 223 bytes (``ControllerRevisionName``)."""
    return f"{parent_name[:223]}-{hash_value}"


@dataclass(frozen=True)
class ControllerKind:
    """The kind that owns pods and revisions (upstream's ``controllerKind``), e.g.
    ``ControllerKind("apps.kruise.io/v1beta1", "StatefulSet")``.

    ``hash_label`` is the revision label holding the hash: ``controller.kubernetes.io/hash``
    (``history.ControllerRevisionHashLabel``) for CloneSets and StatefulSets,
    ``controller-revision-hash`` (``DefaultDaemonSetUniqueLabelKey``) for DaemonSets.
    """

    api_version: str
    kind: str
    hash_label: str = HASH_LABEL

    def reference(self, owner: KubeObject) -> dict[str, Any]:
        """The controller ``ownerReference`` to ``owner`` (``metav1.NewControllerRef``)."""
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": name(owner),
            "uid": uid(owner),
            "controller": True,
            "blockOwnerDeletion": True,
        }


def new_revision(
    owner: KubeObject, revision_number: int, collision_count: int | None, *, controller: ControllerKind
) -> dict[str, Any]:
    """The ControllerRevision dict for ``owner``'s current template (``NewRevision``).

    Labels are the template labels plus the kind's ``hash_label``; annotations are the owner's;
    the owner reference is ``owner`` as ``controller``.
    """
    template = mapping(spec(owner).get("template"))
    data = revision_data(template)
    hash_value = hash_revision_data(data, collision_count)
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": revision_name(name(owner), hash_value),
            "namespace": namespace(owner),
            "labels": {
                **mapping(mapping(template.get("metadata")).get("labels")),
                controller.hash_label: hash_value,
            },
            "annotations": dict(annotations_of(owner)),
            "ownerReferences": [controller.reference(owner)],
        },
        "data": data,
        "revision": revision_number,
    }


def _numeric_hash(revision: KubeObject) -> int | None:
    text = mapping(metadata(revision).get("labels")).get(HASH_LABEL)
    try:
        number = int(str(text), 10)
    except ValueError:
        return None
    return number if -(2**31) <= number < 2**31 else None


def equal_revisions(lhs: KubeObject | None, rhs: KubeObject | None) -> bool:
    """Same revision content (``history.EqualRevision``).

    Both ``None`` is equal; numeric hash labels that differ are unequal (safe-encoded labels
    never parse, as upstream); otherwise the canonical JSON of ``data`` decides, a pod template
    in it taken in :func:`go_encoded_template` form (so a revision stored before that form was
    used still matches its template).
    """
    if lhs is None or rhs is None:
        return lhs is rhs
    left, right = _numeric_hash(lhs), _numeric_hash(rhs)
    if left is not None and right is not None and left != right:
        return False
    return go_json(_comparable_data(lhs.get("data"))) == go_json(_comparable_data(rhs.get("data")))


def sort_revisions(revisions: Iterable[KubeObject]) -> list[KubeObject]:
    """Ascending ``.revision``, then creation time, then name (``SortControllerRevisions``)."""

    def key(rev: KubeObject) -> tuple[int, float, str]:
        created = creation_time(rev)
        return int(rev.get("revision") or 0), created.timestamp() if created else float("-inf"), name(rev)

    return sorted(revisions, key=key)


def next_revision_number(sorted_revisions: Sequence[KubeObject]) -> int:
    """1 for no history, else the last (highest) ``.revision`` + 1 (``NextRevision``)."""
    return int(sorted_revisions[-1].get("revision") or 0) + 1 if sorted_revisions else 1


@dataclass(frozen=True)
class RevisionPlan:
    """What ``getActiveRevisions`` decides.

    Attributes:
        action: ``"reuse"`` (latest revision already matches), ``"bump"`` (an older equal
            revision becomes the newest by setting its ``.revision`` to ``revision_number``:
            a rollback) or ``"create"`` (create ``update_revision``; on a name clash with other
            data, retry with ``collision_count + 1``).
        update_revision: the revision dict (existing, or to create).
        revision_number: the ``.revision`` the update revision should carry.
        current_revision_name: ``status.currentRevision`` when it names a listed revision, else
            the update revision's name.
        collision_count: ``status.collisionCount`` used for the hash.
    """

    action: str
    update_revision: KubeObject
    revision_number: int
    current_revision_name: str
    collision_count: int


RevisionBuilder = Callable[[int, int], KubeObject]
"""``(revision number, collision count) -> ControllerRevision`` for an owner whose revision data
is not a pod template (SidecarSet)."""


def plan_revisions(
    owner: KubeObject,
    revisions: Sequence[KubeObject],
    *,
    controller: ControllerKind,
    build: RevisionBuilder | None = None,
) -> RevisionPlan:
    """Choose the update and current revisions from ``revisions`` (CloneSet ``getActiveRevisions``,
    StatefulSet ``getStatefulSetRevisions``, SidecarSet ``registerLatestRevision``).

    The candidate revision is :func:`new_revision` of ``owner``'s template, or ``build(number,
    collision count)`` when given.
    """
    ordered = sort_revisions(revisions)
    collision = int(status(owner).get("collisionCount") or 0)
    number = next_revision_number(ordered)
    if build is not None:
        candidate = build(number, collision)
    else:
        candidate = new_revision(owner, number, collision, controller=controller)
    equal = [r for r in ordered if equal_revisions(r, candidate)]
    if equal and equal_revisions(ordered[-1], equal[-1]):
        action, update = "reuse", ordered[-1]
        number = int(update.get("revision") or 0)
    elif equal:
        action, update = "bump", equal[-1]
    else:
        action, update = "create", candidate
    wanted = str(status(owner).get("currentRevision") or "")
    current = next((name(r) for r in ordered if name(r) == wanted and wanted), name(update))
    return RevisionPlan(action, update, number, current, collision)


def pods_revisions(pods: Iterable[KubeObject]) -> set[str]:
    """The ``controller-revision-hash`` label values of ``pods``."""
    return {revision_hash(p) for p in pods if revision_hash(p)}


def _live(revision_name: str, live: set[str]) -> bool:
    """Named by ``live`` in full, or by its hash alone (``CloneSetShortHash``; DaemonSet pods)."""
    return revision_name in live or short_hash(revision_name) in live


def revisions_to_delete(
    owner: KubeObject,
    pods: Iterable[KubeObject],
    sorted_revisions: Sequence[KubeObject],
    current_revision: str,
    update_revision: str,
) -> list[KubeObject]:
    """Non-live revisions beyond ``spec.revisionHistoryLimit`` (default 10), oldest first.

    Mirrors ``truncateHistory``.

    Live means the current or update revision, or named by any pod's revision label (the full
    name, or only the hash as with gate ``CloneSetShortHash`` and on DaemonSet pods).
    """
    live = pods_revisions(pods) | {current_revision, update_revision}
    history = [r for r in sorted_revisions if not _live(name(r), live)]
    raw_limit = spec(owner).get("revisionHistoryLimit")
    limit = DEFAULT_HISTORY_LIMIT if raw_limit is None else int(raw_limit)
    if len(history) <= limit:
        return []
    return history[: len(history) - limit]


def template_of_revision(revision: KubeObject) -> dict[str, Any]:
    """The pod template stored in a revision's ``data`` (``GetTemplateFromRevision``), without
    ``$patch``, in :func:`go_encoded_template` form (as upstream reads it into a typed struct), so a
    revision written before that form was used compares with a newer one by content only: its
    missing ``resources: {}`` does not read as a change that forbids an in-place update."""
    template = dict(mapping(mapping(mapping(revision.get("data")).get("spec")).get("template")))
    template.pop("$patch", None)
    return go_encoded_template(template)
