"""What the Rollout engine knows of its workload (a pure value object, built by the workload port)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WorkloadInfo:
    """What the engine needs to know about the workload (``util.Workload`` upstream).

    Revisions are written as the pods carry them under ``revision_label_key`` (the label canary
    Services select on): a short hash in ``pod-template-hash``, or a ControllerRevision name in
    ``controller-revision-hash``.
    """

    kind: str
    api_version: str
    name: str
    namespace: str
    uid: str
    replicas: int
    stable_revision: str
    canary_revision: str
    pod_template_hash: str
    in_progressing: bool
    in_rollback: bool
    status_consistent: bool = True
    updated_replicas: int = 0
    updated_ready_replicas: int = 0
    generation: int = 0
    revision_label_key: str = "pod-template-hash"
    rollout_id: str = ""
    # how the release runs (``releasePlan.rollingStyle``: Partition, Canary, BlueGreen) and whether
    # ``rollouts.kruise.io/rollback-in-batch`` applies to it (the workload port decides both)
    style: str = "Partition"
    rollback_in_batches: bool = False

    @property
    def observed_rollout_id(self) -> str:
        """``getRolloutID``: the ``rollouts.kruise.io/rollout-id`` label, else the canary revision
        (``rollback-<revision>`` while rolling back)."""
        if self.rollout_id:
            return self.rollout_id
        return f"rollback-{self.canary_revision}" if self.in_rollback else self.canary_revision
