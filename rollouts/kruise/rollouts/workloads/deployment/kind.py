"""The native Deployment registry entry: three release styles, its hold, its routes and reads.

- **Partition** (the default): the advanced Deployment controller moves the pods
  (:mod:`.partition`, feature gate ``AdvancedDeployment``);
- **Canary** (``enableExtraWorkloadForCanary: true``): an extra canary Deployment (:mod:`.canary`);
- **BlueGreen**: surge pods next to the old ones (:mod:`kruise.rollouts.workloads.bluegreen`).

A round reads the Deployment's canary Deployments (labelled
``rollouts.kruise.io/canary-deployment=<name>``, index :data:`CANARY_OF`) and the ReplicaSets of
all of them (index ``owner-uid``); a ReplicaSet event concerns the Deployment controlling it, a
canary Deployment's event the stable one. The hold is upstream's ``mdeployment.kb.io`` at
``/mutate-apps-v1-deployment`` (:mod:`.hold`), which also skips the manager's own Deployment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.core.kube.resources import DEPLOYMENTS, REPLICASETS
from kruise.core.runtime.spec import OWNER_UID, controller_ref, index_by_owner_uid
from kruise.rollouts.api.common import RollingStyle
from kruise.rollouts.release.constants import CANARY_DEPLOYMENT_LABEL, IN_PROGRESSING_ANNOTATION
from kruise.rollouts.release.objects import meta
from kruise.rollouts.workloads.bluegreen import BlueGreenRelease
from kruise.rollouts.workloads.deployment.canary import decide_deployment_canary
from kruise.rollouts.workloads.deployment.hold import effective_revision_change, hold_deployment
from kruise.rollouts.workloads.deployment.info import deployment_info
from kruise.rollouts.workloads.deployment.partition import (
    PARTITION_DEPLOYMENT_MESSAGE,
    decide_deployment_partition,
)
from kruise.rollouts.workloads.info import WorkloadInfo
from kruise.rollouts.workloads.label import MANAGER_DEPLOYMENT_EXCLUSION
from kruise.rollouts.workloads.ops import ControlDecision
from kruise.rollouts.workloads.port import (
    CacheView,
    Gates,
    Observation,
    Route,
    WorkloadHold,
    WorkloadKey,
    WorkloadKind,
)

JSON = dict[str, Any]
CANARY_OF = "canary-of"
"""Index of Deployments by ``namespace/<stable name>`` from ``rollouts.kruise.io/canary-deployment``."""


def index_canary_of(deployment: JSON) -> tuple[str, ...]:
    stable = (meta(deployment).get("labels") or {}).get(CANARY_DEPLOYMENT_LABEL)
    return (f"{meta(deployment).get('namespace')}/{stable}",) if stable else ()


def observe(view: CacheView, deployment: JSON) -> Observation:
    """The Deployment with its canary Deployments and the ReplicaSets of all of them."""
    ns, name = str(meta(deployment).get("namespace")), str(meta(deployment).get("name"))
    canaries = view.by_index(DEPLOYMENTS, CANARY_OF, f"{ns}/{name}")
    replicasets: list[JSON] = []
    for owner in (deployment, *canaries):
        replicasets.extend(view.by_index(REPLICASETS, OWNER_UID, str(meta(owner).get("uid") or "")))
    return Observation(deployment, replicasets=replicasets, canaries=canaries)


def read(rollout: Mapping[str, Any], obs: Observation) -> WorkloadInfo:
    return deployment_info(rollout, obs.workload, obs.replicasets, obs.canaries)


@dataclass(frozen=True)
class DeploymentRelease:
    """A Deployment :class:`~kruise.rollouts.workloads.port.ReleaseStyle` with its own control."""

    style: RollingStyle
    decide: Callable[[Mapping[str, Any], Observation | None, Gates], ControlDecision]
    rollback_in_batches: bool = False

    def info(self, rollout: Mapping[str, Any], obs: Observation) -> WorkloadInfo:
        return read(rollout, obs)

    def control(self, br: Mapping[str, Any], obs: Observation | None, gates: Gates) -> ControlDecision:
        return self.decide(br, obs, gates)

    def needs_hpas(self, br: Mapping[str, Any], obs: Observation | None) -> bool:
        return False


def _canary(br: Mapping[str, Any], obs: Observation | None, gates: Gates) -> ControlDecision:
    if obs is None:
        return decide_deployment_canary(br, None, ())
    return decide_deployment_canary(br, obs.workload, obs.canaries, obs.replicasets, obs.pods)


def _partition(br: Mapping[str, Any], obs: Observation | None, gates: Gates) -> ControlDecision:
    status = dict(br.get("status") or {})
    if meta(br).get("deletionTimestamp"):
        return ControlDecision((), status)
    if not gates.advanced_deployment:
        return ControlDecision((), {**status, "message": PARTITION_DEPLOYMENT_MESSAGE})
    if obs is None:
        return decide_deployment_partition(br, None, keep_paused_on_cancel=gates.keep_paused_on_cancel)
    return decide_deployment_partition(
        br, obs.workload, obs.replicasets, pods=obs.pods, keep_paused_on_cancel=gates.keep_paused_on_cancel
    )


def resume(deployment: JSON) -> JSON | None:
    """No BatchRelease to hand the Deployment back: unpause it."""
    return {"spec": {"paused": False}} if (deployment.get("spec") or {}).get("paused") else None


def _deployment_workloads(deployment: JSON) -> list[WorkloadKey]:
    """A Deployment event concerns itself and, for a canary Deployment, its stable one."""
    ns = str(meta(deployment).get("namespace"))
    found: list[WorkloadKey] = [(ns, "Deployment", str(meta(deployment).get("name")))]
    stable = (meta(deployment).get("labels") or {}).get(CANARY_DEPLOYMENT_LABEL)
    if stable:
        found.append((ns, "Deployment", str(stable)))
    return found


def _replicaset_workloads(rs: JSON) -> list[WorkloadKey]:
    """A ReplicaSet event concerns the Deployment that controls it."""
    owner = controller_ref(rs, ("Deployment",))
    return [] if owner is None else [(str(meta(rs).get("namespace")), "Deployment", str(owner.get("name")))]


def _worth_a_look(new: JSON, old: JSON) -> bool:
    in_progress = bool((meta(new).get("annotations") or {}).get(IN_PROGRESSING_ANNOTATION))
    return in_progress or effective_revision_change(old, new)


def _related(new: JSON) -> tuple[Any, str] | None:
    """Entering a release, the hold reads the Deployment's ReplicaSets (by its selector)."""
    if (meta(new).get("annotations") or {}).get(IN_PROGRESSING_ANNOTATION):
        return None
    labels = ((new.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return REPLICASETS, ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


DEPLOYMENT = WorkloadKind(
    resource=DEPLOYMENTS,
    styles={
        RollingStyle.PARTITION: DeploymentRelease(RollingStyle.PARTITION, _partition),
        RollingStyle.CANARY: DeploymentRelease(RollingStyle.CANARY, _canary),
        RollingStyle.BLUE_GREEN: BlueGreenRelease(read),
    },
    hold=WorkloadHold(
        name="mdeployment.kb.io",
        path="/mutate-apps-v1-deployment",
        group="apps",
        versions=("v1",),
        plural="deployments",
        decide=lambda new, old, rollouts, related: hold_deployment(new, old, rollouts, related),
        worth_a_look=_worth_a_look,
        related=_related,
        exclude=(MANAGER_DEPLOYMENT_EXCLUSION,),
    ),
    routes=(
        Route(DEPLOYMENTS, _deployment_workloads, {CANARY_OF: index_canary_of}),
        Route(REPLICASETS, _replicaset_workloads, {OWNER_UID: index_by_owner_uid}),
    ),
    resume=resume,
    observe=observe,
    revisions=False,
)
