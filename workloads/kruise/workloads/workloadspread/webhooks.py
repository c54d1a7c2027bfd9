"""WorkloadSpread's validating webhook.

``vworkloadspread.kb.io`` (upstream v1.8's path ``/validate-apps-kruise-io-v1alpha1-workloadspread``,
CREATE and UPDATE of ``workloadspreads``; an UPDATE only when ``spec`` changed):
:func:`~.validation.validate_ws` against the namespace's other WorkloadSpreads (informer cache)
and, for a target kind not built in, the custom white list;
refused with HTTP 400 and the aggregated message, nothing stored.
"""

from __future__ import annotations

from typing import cast

from kruise.core.errors import ApiError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import REPLICASETS
from kruise.core.runtime import CacheReader, Read
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import WebhookSettings, WebhookSpec
from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.workload_webhooks import validating_webhook_spec
from kruise.workloads.api.workloadspread import WORKLOADSPREADS, WorkloadSpreadView
from kruise.workloads.objects import namespace
from kruise.workloads.workloadspread.customtargets import read_whitelist
from kruise.workloads.workloadspread.validation import CustomList, is_builtin_kind, validate_ws
from kruise.workloads.workloadspread.whitelist import DEFAULT_NAMESPACE, WhitelistError

__all__ = ["VALIDATE_PATH", "WorkloadSpreadWebhooks", "ws_reads", "ws_webhook_specs"]

VALIDATE_PATH = "/validate-apps-kruise-io-v1alpha1-workloadspread"


def ws_reads() -> tuple[Read, ...]:
    """What the WorkloadSpread webhooks read from the informers (the pod step: a Deployment pod's
    ReplicaSet)."""
    return (Read(WORKLOADSPREADS), Read(REPLICASETS))


def ws_webhook_specs(settings: WebhookSettings) -> list[WebhookSpec]:
    """``vworkloadspread.kb.io`` (CREATE, and UPDATEs changing the spec)."""
    return [validating_webhook_spec("workloadspread", VALIDATE_PATH, settings)]


class WorkloadSpreadWebhooks:
    """The WorkloadSpread validating webhook's handler; a target of a kind not built in is
    checked against the custom white list of ``kruise-configuration`` in ``config_namespace``,
    read from the API server (:mod:`.whitelist`; without ``kube`` the list is empty)."""

    def __init__(
        self, cache: CacheReader, kube: KubeClient | None = None, config_namespace: str = DEFAULT_NAMESPACE
    ) -> None:
        self.cache = cache
        self.kube = kube
        self.config_namespace = config_namespace

    async def _custom(self, obj: WorkloadSpreadView) -> CustomList:
        kind = str(((obj.get("spec") or {}).get("targetRef") or {}).get("kind") or "")
        if self.kube is None or not kind or is_builtin_kind(kind):
            return ()
        try:
            return await read_whitelist(self.kube, self.config_namespace)
        except (ApiError, WhitelistError) as err:
            return str(err)

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        obj = cast(WorkloadSpreadView, req.object)
        old = cast(WorkloadSpreadView, req.old_object) if req.operation == "UPDATE" else None
        ns = req.namespace or namespace(req.object)
        others = [cast(WorkloadSpreadView, w) for w in self.cache.list(WORKLOADSPREADS) if namespace(w) == ns]
        errors = validate_ws(obj, old, others, await self._custom(obj))
        if not errors:
            return AdmissionResponse.allow()
        return AdmissionResponse.deny(aggregate(errors), code=400, reason="BadRequest")
