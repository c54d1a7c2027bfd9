"""The shared pod webhook: one mutating path (``/mutate-pod``) and one validating path
(``/validate-pod``) that every pod feature joins (SidecarSet, PodUnavailableBudget,
WorkloadSpread, ...), as upstream's ``pkg/webhook/pod``.

- **Mutating** (``mpod.kb.io``, pods CREATE): a chain of :class:`PodMutator`\\ s, each changing
  its copy of the pod in turn; the answer is one JSON patch from the pod as received to the pod
  as the chain left it (``PatchResponseFromRaw``; :func:`~kruise.core.webhook.patch.json_patch`,
  arrays replaced whole). Only active pods are offered to the chain and
  only on CREATE without subresource. A mutator raising :class:`PodMutationError` refuses the pod
  with HTTP 500 and its message, as upstream's ``admission.Errored(500, err)``.
- **Validating** (``vpod.kb.io``, pods UPDATE/DELETE, ``vpodeviction.kb.io``, ``pods/eviction``
  CREATE): a chain of :class:`PodValidator`\\ s. The path is served, but the configuration entries
  are emitted only as a validating feature scopes them (:class:`ValidatingScope`, e.g.
  PodUnavailableBudget's :mod:`kruise.workloads.podunavailablebudget.scope`; the features'
  scopes joined by :func:`merge_scopes`): a webhook with nothing to judge would make every pod
  update and deletion wait for the manager.

Scope (:func:`pod_webhook_specs`): upstream's namespace selector (not ``control-plane:
openkruise``, not ``kube-system``; here the manager's namespace too), ``failurePolicy`` and
``timeoutSeconds`` from the manager's settings (``mpod.kb.io`` may have its own failure policy,
upstream's chart value ``webhookConfiguration.failurePolicy.pods``), and a CEL ``matchConditions`` entry
(:data:`POD_CONDITION`, kept up to date by the SidecarSet controller) that sends only the pods a
feature could change. Gate ``PodWebhook`` (default on) removes both webhooks.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kruise.core.jsoncopy import json_copy
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import (
    NAMESPACE_NAME_LABEL,
    MatchCondition,
    Rule,
    WebhookSettings,
    WebhookSpec,
)
from kruise.core.webhook.patch import json_patch
from kruise.workloads.pods import is_active

__all__ = [
    "EVICTION_CONDITION",
    "MUTATE_POD_PATH",
    "POD_CONDITION",
    "VALIDATED_POD",
    "VALIDATE_POD_PATH",
    "PodMutationError",
    "PodMutator",
    "PodValidator",
    "PodWebhook",
    "ValidatingScope",
    "eviction_condition",
    "merge_scopes",
    "pod_namespace_selector",
    "pod_webhook_specs",
]

log = logging.getLogger(__name__)
JSON = dict[str, Any]

MUTATE_POD_PATH = "/mutate-pod"
VALIDATE_POD_PATH = "/validate-pod"
MUTATING_NAME = "mpod.kb.io"
POD_CONDITION = "kruise-pod-selected"
"""Name of the pod webhook's ``matchConditions`` entry (its expression changes with the SidecarSets)."""
VALIDATED_POD = "kruise-pod-validated"
"""Name of ``vpod.kb.io``'s condition when several features' conditions are OR'ed."""
EVICTION_CONDITION = "kruise-eviction-namespaces"
"""Name of ``vpodeviction.kb.io``'s condition (its namespaces change with the features' objects)."""


class PodMutationError(Exception):
    """A mutator cannot decide about this pod; it is refused (HTTP 500, this message)."""


class PodMutator(Protocol):
    """One feature of the mutating pod webhook."""

    name: str

    async def mutate(self, pod: JSON, request: AdmissionRequest) -> bool:
        """Change ``pod`` in place for a CREATE; True when it changed something.

        Raises:
            PodMutationError: the pod must be refused.
        """
        ...


class PodValidator(Protocol):
    """One feature of the validating pod webhook (UPDATE, DELETE, eviction)."""

    name: str

    async def validate(self, request: AdmissionRequest) -> AdmissionResponse | None:
        """A denial, or ``None`` to let the next validator decide."""
        ...


class PodWebhook:
    """The handlers of ``/mutate-pod`` and ``/validate-pod`` over their chains."""

    def __init__(self, mutators: Sequence[PodMutator], validators: Sequence[PodValidator] = ()) -> None:
        self.mutators = tuple(mutators)
        self.validators = tuple(validators)

    async def mutate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None or req.operation != "CREATE" or req.raw.get("subResource"):
            return AdmissionResponse.allow()
        if not is_active(req.object):
            return AdmissionResponse.allow()
        pod = json_copy(req.object)
        meta = pod.setdefault("metadata", {})
        if not meta.get("namespace") and req.namespace:
            meta["namespace"] = req.namespace  # upstream: obj.Namespace = req.Namespace
        changed = False
        for mutator in self.mutators:
            try:
                changed = await mutator.mutate(pod, req) or changed
            except PodMutationError as err:
                log.info(
                    "pod %s/%s refused by %s: %s", req.namespace, _pod_name(req.object), mutator.name, err
                )
                return AdmissionResponse.deny(str(err), code=500, reason="InternalError")
        if not changed:
            return AdmissionResponse.allow()
        return AdmissionResponse.allow(json_patch(req.object, pod))

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        for validator in self.validators:
            verdict = await validator.validate(req)
            if verdict is not None:
                return verdict
        return AdmissionResponse.allow()


def _pod_name(pod: JSON) -> str:
    meta = pod.get("metadata") or {}
    return str(meta.get("name") or meta.get("generateName") or "")


def pod_namespace_selector(excluded_namespaces: Sequence[str]) -> JSON:
    """Upstream's pod-webhook namespace selector (not ``control-plane: openkruise``), with the
    excluded namespaces (``kube-system``, the manager's) by name."""
    return {
        "matchExpressions": [
            {"key": "control-plane", "operator": "NotIn", "values": ["openkruise"]},
            {
                "key": NAMESPACE_NAME_LABEL,
                "operator": "NotIn",
                "values": sorted({"kube-system", *excluded_namespaces}),
            },
        ]
    }


@dataclass(frozen=True)
class ValidatingScope:
    """What the validating pod webhooks are sent (a feature of the validating chain sets it).

    ``operations`` are ``vpod.kb.io``'s pod operations (none: no such webhook) with the CEL
    ``pod_conditions`` (all must hold); ``eviction_namespaces`` scope ``vpodeviction.kb.io``
    (``None``: no such webhook). :func:`merge_scopes` joins the features' scopes.
    """

    operations: tuple[str, ...] = ()
    pod_conditions: tuple[MatchCondition, ...] = ()
    eviction_namespaces: frozenset[str] | None = None


def merge_scopes(*scopes: ValidatingScope | None) -> ValidatingScope | None:
    """One scope sending what any of ``scopes`` asks for (``None`` when none asks): operations in
    UPDATE, DELETE order, the pod conditions OR'ed (one condition :data:`VALIDATED_POD`; a single
    scope's are kept as they are), the eviction namespaces united."""
    present = [s for s in scopes if s is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    operations = tuple(op for op in ("UPDATE", "DELETE") if any(op in s.operations for s in present))
    with_pods = [s for s in present if s.operations]
    conditions: tuple[MatchCondition, ...] = ()
    if len(with_pods) == 1:
        conditions = with_pods[0].pod_conditions
    elif with_pods and all(s.pod_conditions for s in with_pods):
        either = " || ".join(
            "(" + " && ".join(f"({c.expression})" for c in s.pod_conditions) + ")" for s in with_pods
        )
        conditions = (MatchCondition(VALIDATED_POD, either),)
    evicting = [s.eviction_namespaces for s in present if s.eviction_namespaces is not None]
    namespaces = frozenset().union(*evicting) if evicting else None
    return ValidatingScope(operations, conditions, namespaces)


def eviction_condition(namespaces: Iterable[str]) -> MatchCondition:
    """``vpodeviction.kb.io``'s condition: the request's namespace is one of ``namespaces``
    (namespace names are DNS labels, safe inside CEL quotes)."""
    names = ", ".join(f"'{ns}'" for ns in sorted(set(namespaces)))
    return MatchCondition(EVICTION_CONDITION, f"request.namespace in [{names}]")


def pod_webhook_specs(
    settings: WebhookSettings, *, condition: str | None, validating: ValidatingScope | None = None
) -> list[WebhookSpec]:
    """``mpod.kb.io`` (with the CEL ``condition``; ``None``: every pod in scope) and, as
    ``validating`` asks, ``vpod.kb.io`` and ``vpodeviction.kb.io`` (upstream's names, both on
    ``/validate-pod``, with the manager's failure policy)."""
    selector = pod_namespace_selector(settings.excluded_namespaces)
    conditions = () if condition is None else (MatchCondition(POD_CONDITION, condition),)
    specs = [
        WebhookSpec(
            name=MUTATING_NAME,
            path=MUTATE_POD_PATH,
            mutating=True,
            rules=(Rule("", "v1", "pods", ("CREATE",)),),
            failure_policy=settings.pods_failure_policy,
            namespace_selector=selector,
            timeout_seconds=settings.timeout_seconds,
            match_conditions=conditions,
        )
    ]
    if validating is None:
        return specs
    wanted: list[tuple[str, Rule, tuple[MatchCondition, ...]]] = []
    if validating.operations:
        pods = Rule("", "v1", "pods", validating.operations)
        wanted.append(("vpod.kb.io", pods, validating.pod_conditions))
    if validating.eviction_namespaces is not None:
        eviction = Rule("", "v1", "pods/eviction", ("CREATE",))
        wanted.append(("vpodeviction.kb.io", eviction, (eviction_condition(validating.eviction_namespaces),)))
    for name, rule, match in wanted:
        specs.append(
            WebhookSpec(
                name=name,
                path=VALIDATE_POD_PATH,
                mutating=False,
                rules=(rule,),
                failure_policy=settings.failure_policy,
                namespace_selector=selector,
                timeout_seconds=settings.timeout_seconds,
                match_conditions=match,
            )
        )
    return specs
