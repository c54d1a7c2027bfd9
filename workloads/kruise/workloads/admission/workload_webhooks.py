"""The two webhook registrations of an ``apps.kruise.io`` workload kind (pure configuration).

Upstream registers ``m<kind>.kb.io`` (mutating, CREATE and UPDATE) and ``v<kind>.kb.io``
(validating, CREATE, UPDATE and DELETE) for every request. Here both see every CREATE and an
UPDATE only when ``spec`` changed, and DELETE reaches the validating one only with the
``ResourcesDeletionProtection`` gate on and only for an object carrying
``policy.kruise.io/delete-protection`` (:data:`.deletion_protection.PROTECTED_DELETE`): the
decisions are the same, only the calls that cannot change one are saved.
"""

from __future__ import annotations

from collections.abc import Sequence

from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec, operation_or_changed
from kruise.workloads.admission.deletion_protection import PROTECTED_DELETE


def workload_webhook_specs(
    kind: str,
    mutate_path: str,
    validate_path: str,
    settings: WebhookSettings = WebhookSettings(),
    *,
    deletion_protection: bool = False,
    versions: Sequence[str] = ("v1alpha1",),
) -> list[WebhookSpec]:
    """``[m<kind>.kb.io, v<kind>.kb.io]`` on ``apps.kruise.io`` ``<kind>s`` of ``versions``.

    ``kind`` is the lower-case singular (``"cloneset"``); ``deletion_protection`` is the gate
    ``ResourcesDeletionProtection`` (adds DELETE to the validating webhook's operations)."""
    spec_changed = operation_or_changed("spec", name="spec-changed")
    plural = f"{kind}s"
    return [
        WebhookSpec(
            name=f"m{kind}.kb.io",
            path=mutate_path,
            mutating=True,
            rules=tuple(Rule("apps.kruise.io", v, plural, ("CREATE", "UPDATE")) for v in versions),
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            match_conditions=(spec_changed,),
        ),
        validating_webhook_spec(
            kind, validate_path, settings, deletion_protection=deletion_protection, versions=versions
        ),
    ]


def validating_webhook_spec(
    kind: str,
    validate_path: str,
    settings: WebhookSettings = WebhookSettings(),
    *,
    name: str | None = None,
    deletion_protection: bool = False,
    versions: Sequence[str] = ("v1alpha1",),
) -> WebhookSpec:
    """``v<kind>.kb.io`` (or ``name``) alone, as in :func:`workload_webhook_specs`: the whole
    registration of a kind upstream only validates (PersistentPodState, WorkloadSpread,
    EphemeralJob)."""
    operations: tuple[str, ...] = ("CREATE", "UPDATE")
    if deletion_protection:
        operations = (*operations, "DELETE")
    spec_changed = operation_or_changed("spec", name="spec-changed")
    return WebhookSpec(
        name=name or f"v{kind}.kb.io",
        path=validate_path,
        mutating=False,
        rules=tuple(Rule("apps.kruise.io", v, f"{kind}s", operations) for v in versions),
        failure_policy=settings.failure_policy,
        timeout_seconds=settings.timeout_seconds,
        match_conditions=(spec_changed, PROTECTED_DELETE) if deletion_protection else (spec_changed,),
    )
