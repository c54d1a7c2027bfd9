"""Admission webhook serving: AdmissionReview over HTTPS and webhook configurations.

The decision logic (defaults, validation) lives in the workload packages as pure
functions; this package only speaks the admission.k8s.io/v1 protocol.
"""

from kruise.core.webhook.review import AdmissionRequest, AdmissionResponse, Handler
from kruise.core.webhook.server import WebhookServer

__all__ = ["AdmissionRequest", "AdmissionResponse", "Handler", "WebhookServer"]
