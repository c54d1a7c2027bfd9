"""The stable and canary revisions of a native DaemonSet, from its ControllerRevisions (pure).

A native DaemonSet's status names no revision. kube's DaemonSet controller keeps one
ControllerRevision per template it ran (labelled ``controller-revision-hash: <hash>``, the label
its pods carry; ``data`` is ``{"spec": {"template": <the template>}}`` with ``"$patch":
"replace"`` added to the template), and gives the one of the current template the highest
``revision`` (a template seen before gets its old ControllerRevision back with a new number).

As Kruise Rollouts' ``ControllerFinder.getNativeDaemonSet``: the **canary** revision is the newest
ControllerRevision's hash, the **stable** one the second newest's (the template the release
replaces), and both are the same when there is only one. Rather than trusting "newest" alone, the
canary revision must be the ControllerRevision whose template *is* the DaemonSet's current one:
the informer of ControllerRevisions may lag behind the DaemonSet's, and a revision read before the
new one arrives would be taken for the canary (:attr:`Revisions.known` is False until it is there;
the release waits). The stable revision is then the newest other one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

HASH_LABEL = "controller-revision-hash"


@dataclass(frozen=True)
class Revisions:
    """``canary``/``stable``: ``controller-revision-hash`` values ("" when unknown); ``known``:
    the current template's ControllerRevision was found."""

    stable: str = ""
    canary: str = ""
    known: bool = False


def _template(revision: Mapping[str, Any]) -> Mapping[str, Any] | None:
    template = ((revision.get("data") or {}).get("spec") or {}).get("template")
    if not isinstance(template, Mapping):
        return None
    return {k: v for k, v in template.items() if k != "$patch"}


def _hash(revision: Mapping[str, Any]) -> str:
    return str(((revision.get("metadata") or {}).get("labels") or {}).get(HASH_LABEL) or "")


def _order(revision: Mapping[str, Any]) -> tuple[int, str]:
    return int(revision.get("revision") or 0), str((revision.get("metadata") or {}).get("name") or "")


def daemonset_revisions(daemonset: Mapping[str, Any], revisions: Sequence[Mapping[str, Any]]) -> Revisions:
    """The revisions of ``daemonset`` among ``revisions`` (the ControllerRevisions it controls,
    any order); ``Revisions()`` (unknown) when none holds its current template."""
    template = (daemonset.get("spec") or {}).get("template")
    live = [r for r in revisions if not (r.get("metadata") or {}).get("deletionTimestamp") and _hash(r)]
    current = [r for r in live if _template(r) == template]
    if not current:
        return Revisions()
    canary = max(current, key=_order)
    others = sorted((r for r in live if _hash(r) != _hash(canary)), key=_order, reverse=True)
    stable = _hash(others[0]) if others else _hash(canary)
    return Revisions(stable=stable, canary=_hash(canary), known=True)
