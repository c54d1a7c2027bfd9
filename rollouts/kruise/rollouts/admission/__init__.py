"""Pure admission logic for Kruise Rollouts' kinds: defaulting and validation.

No I/O here: the webhook shell decodes the AdmissionReview, passes the objects (and the
Rollouts of the namespace, for the conflict check) to these functions and encodes the answer.
Messages are upstream's (``pkg/webhook/rollout/validating``), rendered with
:mod:`kruise.workloads.admission.fielderrors`. Upstream has no BatchRelease or TrafficRouting
webhook, so there is no validation for them here; their CRD defaults are in :mod:`.defaults`.
"""

from kruise.rollouts.admission.checks import BLUE_GREEN_WORKLOADS, KNOWN_WORKLOADS, is_supported_workload
from kruise.rollouts.admission.defaults import default_rollout, default_trafficrouting
from kruise.rollouts.admission.rollout import DEFAULT_PARTITION_PERCENT_LIMIT, RolloutLike
from kruise.rollouts.admission.validate import validate_rollout
from kruise.workloads.admission.fielderrors import ErrorType, FieldError, aggregate

__all__ = [
    "BLUE_GREEN_WORKLOADS",
    "DEFAULT_PARTITION_PERCENT_LIMIT",
    "KNOWN_WORKLOADS",
    "ErrorType",
    "FieldError",
    "RolloutLike",
    "aggregate",
    "default_rollout",
    "default_trafficrouting",
    "is_supported_workload",
    "validate_rollout",
]
