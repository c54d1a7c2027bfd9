"""Kruise Rollouts' well-known names (``KR:pkg/util/constant.go``, ``api/v1beta1``)."""

from __future__ import annotations

GROUP = "rollouts.kruise.io"
ROLLOUT_API_VERSION = "rollouts.kruise.io/v1beta1"

# annotations / labels on workloads
IN_PROGRESSING_ANNOTATION = "rollouts.kruise.io/in-progressing"
ROLLOUT_ID_LABEL = "rollouts.kruise.io/rollout-id"
WORKLOAD_TYPE_LABEL = "rollouts.kruise.io/workload-type"
BATCH_RELEASE_CONTROL_ANNOTATION = "batchrelease.rollouts.kruise.io/control-info"
STABLE_REVISION_LABEL = "rollouts.kruise.io/stable-revision"
CANARY_DEPLOYMENT_LABEL = "rollouts.kruise.io/canary-deployment"
ROLLOUT_HASH_ANNOTATION = "rollouts.kruise.io/hash"
ROLLOUT_LABEL = "rollouts.kruise.io/rollout"  # on a Rollout's AnalysisRuns (kruise)
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"

# finalizers
ROLLOUT_FINALIZER = "rollouts.kruise.io/rollout"
BATCH_RELEASE_FINALIZER = "finalizer.rollouts.kruise.io/batch-release"

# phases, step states, conditions and their reasons, finalising steps: StrEnums of
# ``kruise.rollouts.api.common`` (RolloutPhase, CanaryStepState, RolloutConditionType,
# ProgressingReason, TerminatingReason, FinalisingStepType, FinaliseReason, BatchReleaseBatchState)

DEFAULT_GRACE_SECONDS = 3
RECHECK_SECONDS = 3.0
DEFAULT_DURATION_SECONDS = 2.0
"""Upstream's ``DefaultDuration`` (``batchrelease_executor.go``): the BatchRelease's requeue after
``Upgrading`` and after ``Verifying``. Ours uses it as the pacing of a newly Ready batch
(:mod:`kruise.rollouts.batchrelease.pacing`) and as the recheck of a batch not ready yet (its
workload's watch events wake it sooner; our BatchRelease reads but does not watch the pods, so
the timer covers a pod label reaching the cache last)."""

# Deployments and blue-green (``KR:api/v1beta1/deployment_types.go``, ``bluegreenstyle``)
ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION = "rollouts.kruise.io/original-deployment-strategy"
DEPLOYMENT_STRATEGY_ANNOTATION = "rollouts.kruise.io/deployment-strategy"
DEPLOYMENT_REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
MAX_PROGRESS_SECONDS = 2**31 - 1  # math.MaxInt32
MAX_READY_SECONDS = MAX_PROGRESS_SECONDS - 1  # must stay below progressDeadlineSeconds
HPA_DISABLE_SUFFIX = "-DisableByRollout"
BATCH_RELEASE_OWN_FINALIZER = "rollouts.kruise.io/batch-release-finalizer"
BLUE_GREEN_CONTINUOUS_RELEASE_MESSAGE = (
    "new version releasing detected in the progress of blue-green release, please rollback first"
)
