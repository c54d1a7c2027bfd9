"""PodUnavailableBudget's webhooks: its own validating webhook and its part of the pod webhook.

- ``vpodunavailablebudget.kb.io`` (``/validate-policy-kruise-io-podunavailablebudget``, CREATE and
  UPDATE): :func:`~.validation.validate_pub` against the namespace's other PUBs (informer cache);
  refused with HTTP 400 and the aggregated message. With both gates ``PodUnavailableBudgetDeleteGate``
  and ``PodUnavailableBudgetUpdateGate`` off every PUB is refused with upstream's
  ``feature PodUnavailableBudget is invalid, please open via feature-gate(...)``.
- :class:`PubPodValidator` joins the validating pod chain (``vpod.kb.io``, ``vpodeviction.kb.io``;
  scope in :mod:`.scope`): a DELETE of a pod (gate ``PodUnavailableBudgetDeleteGate``), a
  ``pods/eviction`` (same gate) or an UPDATE that changes the pod's spec or adds an
  ``unavailable-pod.kruise.io/*`` label (gate ``PodUnavailableBudgetUpdateGate``) of a pod carrying
  ``kruise.io/related-pub`` is admitted only after one unit of that PUB's ``unavailableAllowed``
  has been spent (status written with a resourceVersion precondition, :mod:`.store`); else it is
  refused with HTTP 403 ``podunavailablebudget.policy.kruise.io "<pub>" is forbidden: pub
  unavailable allowed is negative``. Admitted without spending, as upstream: pods annotated
  ``pub.kruise.io/no-protect: "true"``, pods not available now (not ready, terminating, updating),
  a PUB gone or with ``desiredAvailable`` 0, an operation left out by
  ``kruise.io/pub-protect-operations``, a pod already recorded. A dry run is judged but spends
  nothing (upstream's ``dryRun``).
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable, Iterable, Mapping

from kruise.core.errors import KruiseError, NotFoundError, TransientError
from kruise.core.events import EventRecorder
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from kruise.core.runtime import CacheReader, Read
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec, operation_or_changed
from kruise.workloads.api.podunavailablebudget import PUBS, RELATED_PUB_ANNOTATION
from kruise.workloads.objects import KubeObject, annotations_of, namespace, spec
from kruise.workloads.pods import has_unavailable_label
from kruise.workloads.podunavailablebudget.budget import Operation, exempt
from kruise.workloads.podunavailablebudget.keeper import BudgetKeeper
from kruise.workloads.podunavailablebudget.scope import PROTECTED_POD
from kruise.workloads.podunavailablebudget.validation import validate_pub
from kruise.workloads.podwebhook import ValidatingScope

__all__ = [
    "DELETE_GATE",
    "UPDATE_GATE",
    "VALIDATE_PUB_PATH",
    "PubPodValidator",
    "PubWebhooks",
    "pub_reads",
    "pub_validating_scope",
    "pub_webhook_specs",
]

log = logging.getLogger("kruise.podunavailablebudget")
DELETE_GATE = "PodUnavailableBudgetDeleteGate"
UPDATE_GATE = "PodUnavailableBudgetUpdateGate"
VALIDATE_PUB_PATH = "/validate-policy-kruise-io-podunavailablebudget"
GATES_OFF_MESSAGE = (
    f"feature PodUnavailableBudget is invalid, please open via feature-gate({DELETE_GATE}, {UPDATE_GATE})"
)


def pub_reads() -> tuple[Read, ...]:
    """What the PUB webhooks read from the informers."""
    return (Read(PUBS),)


def pub_webhook_specs(settings: WebhookSettings) -> list[WebhookSpec]:
    """``vpodunavailablebudget.kb.io`` (CREATE, and UPDATEs changing the spec or annotations)."""
    return [
        WebhookSpec(
            name="vpodunavailablebudget.kb.io",
            path=VALIDATE_PUB_PATH,
            mutating=False,
            rules=(Rule("policy.kruise.io", "v1alpha1", "podunavailablebudgets", ("CREATE", "UPDATE")),),
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            match_conditions=(
                operation_or_changed("spec", "metadata.annotations", name="spec-or-annotations"),
            ),
        )
    ]


def pub_validating_scope(gates: Mapping[str, bool], pubs: Iterable[KubeObject]) -> ValidatingScope | None:
    """The validating pod webhooks the gates call for (``None``: neither gate on), ``vpod.kb.io``
    limited to protected pods and ``vpodeviction.kb.io`` to the namespaces of ``pubs``."""
    delete, update = gates.get(DELETE_GATE, True), gates.get(UPDATE_GATE, False)
    if not delete and not update:
        return None
    operations = (*(("UPDATE",) if update else ()), *(("DELETE",) if delete else ()))
    return ValidatingScope(
        operations=operations,
        pod_conditions=(PROTECTED_POD,),
        eviction_namespaces=frozenset(namespace(p) for p in pubs) if delete else None,
    )


class PubWebhooks:
    """The PUB validating webhook's handler."""

    def __init__(self, cache: CacheReader, gates: Mapping[str, bool]) -> None:
        self.cache = cache
        self.enabled = gates.get(DELETE_GATE, True) or gates.get(UPDATE_GATE, False)

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if not self.enabled:
            return AdmissionResponse.deny(GATES_OFF_MESSAGE, code=400, reason="BadRequest")
        if req.object is None:
            return AdmissionResponse.allow()
        old = req.old_object if req.operation == "UPDATE" else None
        ns = req.namespace or namespace(req.object)
        others = [p for p in self.cache.list(PUBS) if namespace(p) == ns]
        message = validate_pub(req.object, old, others)
        if message is None:
            return AdmissionResponse.allow()
        return AdmissionResponse.deny(message, code=400, reason="BadRequest")


def unavailable_changed(old: KubeObject, new: KubeObject) -> bool:
    """``IsPodUnavailableChanged``: the spec changed, or an unavailable label was added."""
    return spec(old) != spec(new) or (not has_unavailable_label(old) and has_unavailable_label(new))


class PubPodValidator:
    """The budget check of the validating pod webhook (see the module docstring)."""

    name = "podunavailablebudget"

    def __init__(
        self,
        kube: KubeClient,
        gates: Mapping[str, bool],
        *,
        clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self.kube = kube
        self.delete = gates.get(DELETE_GATE, True)
        self.update = gates.get(UPDATE_GATE, False)
        self.keeper = BudgetKeeper(kube, recorder=EventRecorder(kube, "podunavailablebudget"), clock=clock)

    async def _target(self, req: AdmissionRequest) -> tuple[KubeObject, Operation] | None:
        sub = req.raw.get("subResource") or ""
        if req.operation == "UPDATE" and self.update and not sub:
            if req.object is None or req.old_object is None:
                return None
            if not annotations_of(req.object).get(RELATED_PUB_ANNOTATION):
                return None
            if not unavailable_changed(req.old_object, req.object):
                return None
            return req.old_object, Operation.UPDATE
        if req.operation == "DELETE" and self.delete and not sub and req.old_object is not None:
            return req.old_object, Operation.DELETE
        if req.operation == "CREATE" and self.delete and sub == "eviction" and req.name and req.namespace:
            try:
                return await self.kube.get(PODS, req.name, req.namespace), Operation.EVICT
            except NotFoundError:
                return None
        return None

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse | None:
        try:
            target = await self._target(req)
        except KruiseError as err:
            return AdmissionResponse.deny(str(err), code=400, reason="BadRequest")
        if target is None:
            return None
        pod, operation = target
        pub_name = annotations_of(pod).get(RELATED_PUB_ANNOTATION)
        if not pub_name or exempt(pod):
            return None
        try:
            return await self._check(pod, str(pub_name), operation, req.dry_run)
        except TransientError as err:
            return AdmissionResponse.deny(f"Timeout: {err}", code=403, reason="Forbidden")
        except KruiseError as err:
            return AdmissionResponse.deny(str(err), code=400, reason="BadRequest")

    async def _check(
        self, pod: KubeObject, pub_name: str, operation: Operation, dry_run: bool
    ) -> AdmissionResponse | None:
        refusal = await self.keeper.admit(pod, pub_name, operation, dry_run=dry_run)
        if refusal is None:
            return None
        return AdmissionResponse.deny(refusal, code=403, reason="Forbidden")
