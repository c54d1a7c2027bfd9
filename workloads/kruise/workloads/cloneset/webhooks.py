"""CloneSet admission webhooks: the AdmissionReview adapter around the pure rules.

Paths and names are OpenKruise's: ``/mutate-apps-kruise-io-v1alpha1-cloneset``
(``mcloneset.kb.io``) answers with a JSON patch of the defaults
(:func:`kruise.workloads.admission.cloneset.default_cloneset`), and
``/validate-apps-kruise-io-v1alpha1-cloneset`` (``vcloneset.kb.io``) denies with
HTTP 422 and the aggregated field errors, as controller-runtime's
``admission.Errored(http.StatusUnprocessableEntity, ...)``.

Scope (a webhook sees only what it must, :mod:`kruise.core.webhook.configuration`): both see
every CREATE, and an UPDATE only when ``spec`` changed, so a label, annotation, finalizer or
owner change of a CloneSet (and ``kubectl scale``, a ``clonesets/scale`` subresource write)
never waits for the manager. DELETE reaches ``vcloneset.kb.io`` only with the
``ResourcesDeletionProtection`` gate on and only for an object carrying
``policy.kruise.io/delete-protection``, the only deletions it can refuse. Upstream registers both
for every request; the decisions are the same, only the calls that cannot change one are saved.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping
from typing import Any

import jsonpatch

from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import PODS
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.workloads.admission.cloneset import (
    default_cloneset,
    is_well_typed,
    validate_cloneset_create,
    validate_cloneset_delete,
    validate_cloneset_update,
)
from kruise.workloads.admission.dryrun import template_verdict
from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.workload_webhooks import workload_webhook_specs
from kruise.workloads.deletionprotection.webhooks import protection_denied

log = logging.getLogger(__name__)

MUTATE_PATH = "/mutate-apps-kruise-io-v1alpha1-cloneset"
VALIDATE_PATH = "/validate-apps-kruise-io-v1alpha1-cloneset"


cloneset_webhook_specs = functools.partial(workload_webhook_specs, "cloneset", MUTATE_PATH, VALIDATE_PATH)
"""``mcloneset.kb.io`` and ``vcloneset.kb.io`` (DELETE only with ``deletion_protection``)."""


class CloneSetWebhooks:
    """Handlers bound to a client (for the podsToDelete and deletion-protection lookups)."""

    def __init__(
        self, kube: KubeClient, *, template_no_defaults: bool = False, deletion_protection: bool = False
    ) -> None:
        self.kube = kube
        self.template_no_defaults = template_no_defaults
        self.deletion_protection = deletion_protection  # gate ResourcesDeletionProtection

    async def mutate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None or not is_well_typed(req.object):
            return AdmissionResponse.allow()  # a wrong JSON type: the schema refuses it, naming the field
        defaulted = default_cloneset(
            req.object, old=req.old_object, template_no_defaults=self.template_no_defaults
        )
        patch: list[dict[str, Any]] = jsonpatch.make_patch(req.object, defaulted).patch
        return AdmissionResponse.allow(patch)

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.operation == "DELETE":
            message = validate_cloneset_delete(req.old_object or {}, gate_enabled=self.deletion_protection)
            if message:
                return protection_denied(req.kind, req.old_object or {}, req.user, message)
            return AdmissionResponse.allow()
        if req.object is None:
            return AdmissionResponse.allow()
        old = req.old_object or {}
        new_names = set(_pods_to_delete(req.object)) - set(_pods_to_delete(old))
        pods, verdict = await asyncio.gather(
            self._fetch_pods(req.namespace or "", sorted(new_names)),
            template_verdict(self.kube, req.object, req.old_object, req.namespace or ""),
        )
        if req.operation == "CREATE":
            errors = validate_cloneset_create(req.object, pod_lookup=pods.get, template_errors=verdict)
        else:
            errors = validate_cloneset_update(req.object, old, pod_lookup=pods.get, template_errors=verdict)
        return _deny_or_allow(errors)

    async def _fetch_pods(self, namespace: str, names: list[str]) -> dict[str, dict[str, Any]]:
        found = await asyncio.gather(*(self.kube.get_or_none(PODS, n, namespace) for n in names))
        return {n: p for n, p in zip(names, found, strict=True) if p is not None}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("name") if isinstance(meta, Mapping) else "")


def _pods_to_delete(obj: Mapping[str, Any]) -> list[str]:
    strategy = _spec(obj).get("scaleStrategy")
    names = strategy.get("podsToDelete") if isinstance(strategy, Mapping) else None
    return [str(n) for n in names] if isinstance(names, list) else []


def _deny_or_allow(errors: list[Any]) -> AdmissionResponse:
    if not errors:
        return AdmissionResponse.allow()
    return AdmissionResponse.deny(aggregate(errors))
