"""Advanced StatefulSet admission webhooks: the AdmissionReview adapter around the pure rules.

Paths and names are OpenKruise's: ``/mutate-apps-kruise-io-statefulset`` (``mstatefulset.kb.io``)
answers with a JSON patch of the defaults and ``/validate-apps-kruise-io-statefulset``
(``vstatefulset.kb.io``) denies with HTTP 422 and the aggregated field errors; both for
``v1alpha1`` and ``v1beta1``. As for the CloneSet, a wrongly typed object is left to the CRD
schema (no defaults), and the pod template is judged by the API server (a dry-run Pod, which
upstream's StatefulSet webhook does not ask for: a template no pod can be made of is refused here
instead of failing every pod creation). A v1alpha1 object is converted to v1beta1 for the rules and the
defaulted object back to v1alpha1 (:mod:`kruise.workloads.api.statefulset_conversion`), as
upstream's handlers do. DELETE is checked for deletion protection (gate
``ResourcesDeletionProtection``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonpatch

from kruise.core.errors import KruiseError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import STORAGE_CLASSES
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec, operation_or_changed
from kruise.workloads.admission.deletion_protection import PROTECTED_DELETE
from kruise.workloads.admission.dryrun import template_verdict
from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.statefulset import (
    default_statefulset,
    in_place_only_violation,
    is_well_typed,
    validate_statefulset_create,
    validate_statefulset_delete,
    validate_statefulset_update,
    validate_volume_claim_template_update,
)
from kruise.workloads.api.statefulset_conversion import (
    ALPHA_API_VERSION,
    BETA_API_VERSION,
    convert_statefulset,
)
from kruise.workloads.deletionprotection.webhooks import protection_denied

__all__ = ["MUTATE_PATH", "VALIDATE_PATH", "StatefulSetWebhooks", "statefulset_webhook_specs"]

MUTATE_PATH = "/mutate-apps-kruise-io-statefulset"
VALIDATE_PATH = "/validate-apps-kruise-io-statefulset"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
_VERSIONS = ("v1alpha1", "v1beta1")


def statefulset_webhook_specs(
    settings: WebhookSettings = WebhookSettings(), *, deletion_protection: bool = False
) -> list[WebhookSpec]:
    """``mstatefulset.kb.io`` and ``vstatefulset.kb.io`` for both versions; as for the CloneSet an
    UPDATE reaches them only when ``spec`` changed and DELETE only with ``deletion_protection``, for
    a labelled object (upstream registers them for every request; the decisions are the same)."""
    operations: tuple[str, ...] = (
        ("CREATE", "UPDATE", "DELETE") if deletion_protection else ("CREATE", "UPDATE")
    )
    spec_changed = operation_or_changed("spec", name="spec-changed")
    return [
        WebhookSpec(
            name="mstatefulset.kb.io",
            path=MUTATE_PATH,
            mutating=True,
            rules=tuple(Rule("apps.kruise.io", v, "statefulsets", ("CREATE", "UPDATE")) for v in _VERSIONS),
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            match_conditions=(spec_changed,),
        ),
        WebhookSpec(
            name="vstatefulset.kb.io",
            path=VALIDATE_PATH,
            mutating=False,
            rules=tuple(Rule("apps.kruise.io", v, "statefulsets", operations) for v in _VERSIONS),
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            match_conditions=(spec_changed, PROTECTED_DELETE) if deletion_protection else (spec_changed,),
        ),
    ]


def _beta(obj: Mapping[str, Any]) -> dict[str, Any]:
    if obj.get("apiVersion") == ALPHA_API_VERSION:
        return convert_statefulset(obj, BETA_API_VERSION)
    return dict(obj)


class StatefulSetWebhooks:
    """Handlers bound to a client (StorageClass lookups under the resize gate) and the gates."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        template_no_defaults: bool = False,
        deletion_protection: bool = False,
        auto_delete_pvc: bool = True,
        auto_resize_pvc: bool = False,
    ) -> None:
        self.kube = kube
        self.template_no_defaults = template_no_defaults
        self.deletion_protection = deletion_protection
        self.auto_delete_pvc = auto_delete_pvc
        self.auto_resize_pvc = auto_resize_pvc

    async def mutate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None or not is_well_typed(_beta(req.object)):
            return AdmissionResponse.allow()  # a wrong JSON type: the schema refuses it, naming the field
        old = _beta(req.old_object) if req.old_object is not None else None
        defaulted = default_statefulset(
            _beta(req.object),
            old=old,
            template_no_defaults=self.template_no_defaults,
            auto_delete_pvc=self.auto_delete_pvc,
            auto_resize_pvc=self.auto_resize_pvc,
        )
        if req.object.get("apiVersion") == ALPHA_API_VERSION:
            defaulted = convert_statefulset(defaulted, ALPHA_API_VERSION)
        defaulted.pop("status", None)  # upstream clears it; the API server ignores it anyway
        original = {k: v for k, v in req.object.items() if k != "status"}
        patch: list[dict[str, Any]] = jsonpatch.make_patch(original, defaulted).patch
        return AdmissionResponse.allow(patch)

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.operation == "DELETE":
            stored = _beta(req.old_object or {})
            message = validate_statefulset_delete(stored, gate_enabled=self.deletion_protection)
            if message:
                return protection_denied(req.kind, stored, req.user, message)
            return AdmissionResponse.allow()
        if req.object is None:
            return AdmissionResponse.allow()
        obj = _beta(req.object)
        old = _beta(req.old_object) if req.old_object is not None else None
        verdict = await template_verdict(self.kube, obj, old, req.namespace or "")
        if req.operation == "CREATE" or old is None:
            errors = validate_statefulset_create(obj, template_errors=verdict)
            return AdmissionResponse.deny(aggregate(errors)) if errors else AdmissionResponse.allow()
        errors = validate_statefulset_update(obj, old, template_errors=verdict)
        if errors:
            return AdmissionResponse.deny(aggregate(errors))
        if self.auto_resize_pvc:
            classes = await self._storage_classes()
            claim_errors = validate_volume_claim_template_update(obj, old, classes.lookup)
            if claim_errors:
                return AdmissionResponse.deny(aggregate(claim_errors))
        violation = in_place_only_violation(old, obj)
        if violation is not None:
            return AdmissionResponse.deny(violation)
        return AdmissionResponse.allow()

    async def _storage_classes(self) -> _StorageClasses:
        try:
            items = (await self.kube.list(STORAGE_CLASSES))["items"]
        except KruiseError as err:
            return _StorageClasses([], err)
        return _StorageClasses(items, None)


class _StorageClasses:
    """A listing of StorageClasses as the lookup the claim-template rule asks for."""

    def __init__(self, items: list[dict[str, Any]], error: Exception | None) -> None:
        self.items = items
        self.error = error

    def lookup(self, class_name: str | None) -> Mapping[str, Any] | None:
        if self.error is not None:
            raise self.error
        if class_name is not None:
            return next((c for c in self.items if (c.get("metadata") or {}).get("name") == class_name), None)
        defaults = [
            c
            for c in self.items
            if ((c.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true"
        ]
        defaults.sort(key=lambda c: str((c.get("metadata") or {}).get("creationTimestamp") or ""))
        return defaults[-1] if defaults else None
