"""Pure admission logic (defaulting and validation) for the Kruise workloads.

No I/O here: the webhook shell decodes the AdmissionReview, calls these functions and encodes
the answer. Messages are upstream's, byte for byte (see :mod:`.fielderrors`).
"""

from kruise.workloads.admission.cloneset import (
    default_cloneset,
    validate_cloneset_create,
    validate_cloneset_delete,
    validate_cloneset_update,
)
from kruise.workloads.admission.cloneset_strategy import PodLookup
from kruise.workloads.admission.fielderrors import ErrorType, FieldError, aggregate
from kruise.workloads.admission.pod_defaults import default_pod_template

__all__ = [
    "ErrorType",
    "FieldError",
    "PodLookup",
    "aggregate",
    "default_cloneset",
    "default_pod_template",
    "validate_cloneset_create",
    "validate_cloneset_delete",
    "validate_cloneset_update",
]
