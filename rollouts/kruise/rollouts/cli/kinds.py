"""Which kubectl-kruise verbs take which kinds, and how (pure): one :class:`KindRules` row a kind.

The rows mirror kruise-tools' ``polymorphichelpers`` switches:

- ``set image|env|resources|serviceaccount`` (``updatePodSpecForObject``): CloneSet, Advanced
  StatefulSet, Advanced DaemonSet, Deployment, StatefulSet, DaemonSet, Job, CronJob (its job
  template's pod spec) and Pod (its own spec);
- ``rollout pause|resume`` (``objectpauser.go``/``objectresumer.go``): Rollout, CloneSet and
  Deployment only (``pausing is not supported`` for the others);
- ``rollout restart``: Deployment, StatefulSet and DaemonSet get the template annotation
  ``kubectl.kubernetes.io/restartedAt`` (``objectrestarter.go``; a paused Deployment refused);
  CloneSet, Advanced StatefulSet and Advanced DaemonSet the env var ``RESTARTED_AT`` in every
  container, the object replaced (``rollout_restart.go``'s ``UpdateResourceEnv``);
- ``rollout history|undo`` (``HistoryViewerFor``/``RollbackerFor``): a Deployment through its
  ReplicaSets; CloneSet, StatefulSet, DaemonSet, Advanced StatefulSet and Advanced DaemonSet
  through their ControllerRevisions (an Advanced StatefulSet with one revision says "no latest
  revision to roll back to", the others "no last revision ...");
- ``rollout status`` (``StatusViewerFor``): Deployment, StatefulSet, DaemonSet, CloneSet and
  Advanced StatefulSet with their viewers' words (:mod:`.status_view`); kruise adds the Advanced
  DaemonSet, read as a DaemonSet (kubectl-kruise has no viewer for it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kruise.core.kube import Resource
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, NATIVE_DAEMONSETS, NATIVE_STATEFULSETS, PODS
from kruise.rollouts.cli.refs import ADVANCED_DAEMONSETS, ADVANCED_STATEFULSETS, CRONJOBS, JOBS, resource_for
from kruise.rollouts.cli.status_view import (
    Verdict,
    advanced_statefulset_verdict,
    cloneset_verdict,
    daemonset_verdict,
    deployment_verdict,
    statefulset_verdict,
)
from kruise.rollouts.resources import ROLLOUTS

JSON = dict[str, Any]
TEMPLATE_POD_SPEC = ("spec", "template", "spec")
StatusViewer = Callable[[Mapping[str, Any], int], Verdict]  # (object, --revision) -> verdict


class Restart(StrEnum):
    """How ``rollout restart`` restarts a kind's pods."""

    ANNOTATION = "annotation"  # template annotation kubectl.kubernetes.io/restartedAt, merge patch
    ENV = "env"  # env var RESTARTED_AT in every container, the object replaced


class HistorySource(StrEnum):
    """Where a kind's revisions are."""

    REPLICASETS = "replicasets"  # deployment.kubernetes.io/revision
    CONTROLLER_REVISIONS = "controllerrevisions"  # .revision


@dataclass(frozen=True)
class KindRules:
    """What the verbs do with one kind; None where the verb refuses it.

    ``pod_spec``: the path of the pod spec ``set`` edits; ``paused``: the flag ``pause``/``resume``
    sets; ``no_previous``: ``undo``'s refusal when there is one revision only."""

    pod_spec: tuple[str, ...] | None = TEMPLATE_POD_SPEC
    paused: tuple[str, ...] | None = None
    restart: Restart | None = None
    history: HistorySource | None = None
    status: StatusViewer | None = None
    no_previous: str = "no last revision to roll back to"


def _ignoring_revision(verdict: Callable[[Mapping[str, Any]], Verdict]) -> StatusViewer:
    return lambda obj, _revision: verdict(obj)


_REVISIONS = HistorySource.CONTROLLER_REVISIONS
RULES: dict[Resource, KindRules] = {
    ROLLOUTS: KindRules(pod_spec=None, paused=("spec", "strategy", "paused")),
    CLONESETS: KindRules(
        paused=("spec", "updateStrategy", "paused"),
        restart=Restart.ENV,
        history=_REVISIONS,
        status=_ignoring_revision(cloneset_verdict),
    ),
    DEPLOYMENTS: KindRules(
        paused=("spec", "paused"),
        restart=Restart.ANNOTATION,
        history=HistorySource.REPLICASETS,
        status=deployment_verdict,
    ),
    NATIVE_STATEFULSETS: KindRules(
        restart=Restart.ANNOTATION, history=_REVISIONS, status=_ignoring_revision(statefulset_verdict)
    ),
    NATIVE_DAEMONSETS: KindRules(
        restart=Restart.ANNOTATION, history=_REVISIONS, status=_ignoring_revision(daemonset_verdict)
    ),
    ADVANCED_STATEFULSETS: KindRules(
        restart=Restart.ENV,
        history=_REVISIONS,
        status=_ignoring_revision(advanced_statefulset_verdict),
        no_previous="no latest revision to roll back to",
    ),
    ADVANCED_DAEMONSETS: KindRules(
        restart=Restart.ENV, history=_REVISIONS, status=_ignoring_revision(daemonset_verdict)
    ),
    JOBS: KindRules(),
    CRONJOBS: KindRules(pod_spec=("spec", "jobTemplate", "spec", "template", "spec")),
    PODS: KindRules(pod_spec=("spec",)),
}
_NONE = KindRules(pod_spec=None)


def rules(res: Resource) -> KindRules:
    """The row of ``res`` (a row refusing every verb for a kind not in the table)."""
    return RULES.get(res, _NONE)


def settable() -> tuple[Resource, ...]:
    """The kinds ``set image|env|resources|serviceaccount`` edit."""
    return tuple(res for res, row in RULES.items() if row.pod_spec is not None)


def pod_spec_path(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """Where ``obj``'s pod spec is, by its ``apiVersion``/``kind`` (a pod template's by default)."""
    res = resource_for(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    return (rules(res).pod_spec if res is not None else None) or TEMPLATE_POD_SPEC


def pod_spec(obj: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """``(JSON pointer, pod spec)`` of ``obj`` (``/spec/template/spec``; ``{}`` when absent)."""
    path = pod_spec_path(obj)
    node: Any = obj
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return "/" + "/".join(path), node if isinstance(node, Mapping) else {}
