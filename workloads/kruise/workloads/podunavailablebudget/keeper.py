"""Spending a PodUnavailableBudget (shell): upstream's ``PodUnavailableBudgetValidatePod``.

One :class:`BudgetKeeper` serves the pod webhook (a DELETE, eviction or UPDATE of a pod) and the
Kruise controllers that update pods in place (the CloneSet asks before it marks a pod not ready,
so the webhook later sees the pod recorded and admits its patch). :meth:`BudgetKeeper.admit`
reads the PUB from the API server, leaves it untouched when the pod need not spend (gone PUB,
``desiredAvailable`` 0, operation not protected, pod already recorded) and otherwise spends one
unit with a resourceVersion-checked status write (:mod:`.store`, :func:`~.budget.spend`). A
refusal records upstream's Warning event ``PubPreventPodDeletion`` on the pod.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

from kruise.core.events import WARNING, EventRecorder
from kruise.core.informer.store import JSON
from kruise.core.kube import KubeClient
from kruise.workloads.api.podunavailablebudget import PUBS, RELATED_PUB_ANNOTATION, PubStatusView
from kruise.workloads.objects import KubeObject, annotations_of, name, namespace
from kruise.workloads.podunavailablebudget.budget import (
    BudgetRefused,
    Operation,
    exempt,
    is_protected,
    recorded,
    spend,
)
from kruise.workloads.podunavailablebudget.store import StatusWriter, status_of

__all__ = ["PREVENTED_MESSAGE", "PREVENTED_REASON", "BudgetKeeper", "forbidden_message"]

log = logging.getLogger("kruise.podunavailablebudget")
PREVENTED_REASON = "PubPreventPodDeletion"
PREVENTED_MESSAGE = "openkruise pub prevents pod deletion"
"""The Warning event upstream records on a pod whose disruption a budget refused (any operation)."""


def forbidden_message(pub_name: str, reason: str) -> str:
    """``errors.NewForbidden(policy.kruise.io/podunavailablebudget, name, reason).Error()``."""
    return f'podunavailablebudget.policy.kruise.io "{pub_name}" is forbidden: {reason}'


class BudgetKeeper:
    """Spends PUB budgets for pod disruptions (see the module docstring)."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        recorder: EventRecorder | None = None,
        clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.writer = StatusWriter(kube)
        self.clock = clock

    async def admit_pod(self, pod: KubeObject, operation: Operation) -> str | None:
        """:meth:`admit` for the PUB named by the pod's ``kruise.io/related-pub`` (none: admitted);
        pods exempt from every budget (no-protect, not available now) are admitted."""
        pub_name = annotations_of(pod).get(RELATED_PUB_ANNOTATION)
        if not pub_name or exempt(pod):
            return None
        return await self.admit(pod, str(pub_name), operation)

    async def admit(
        self, pod: KubeObject, pub_name: str, operation: Operation, *, dry_run: bool = False
    ) -> str | None:
        """``None`` when ``operation`` on ``pod`` may go ahead (a unit spent unless ``dry_run``),
        else upstream's refusal (``podunavailablebudget.policy.kruise.io "<pub>" is forbidden:
        pub unavailable allowed is negative``).

        Raises:
            TransientError: the status write kept conflicting, or the API server is unreachable.
            KruiseError: the API server refused the read or the write.
        """
        pod_name, ns = name(pod), namespace(pod)
        pub = await self.kube.get_or_none(PUBS, pub_name, ns)
        if pub is None or not is_protected(annotations_of(pub), operation):
            return None
        if int(status_of(pub).get("desiredAvailable") or 0) == 0 or recorded(status_of(pub), pod_name):
            return None

        def take(current: JSON) -> PubStatusView | None:
            status = status_of(current)
            if recorded(status, pod_name):
                return None
            after = spend(status, pod_name, operation, self.clock())  # raises BudgetRefused
            return None if dry_run else after

        try:
            await self.writer.update(ns, pub_name, take, first=pub)
        except BudgetRefused as refused:
            log.info("pub %s/%s refused %s of pod %s: %s", ns, pub_name, operation.value, pod_name, refused)
            if self.recorder is not None:
                self.recorder.event(pod, WARNING, PREVENTED_REASON, PREVENTED_MESSAGE)
            return forbidden_message(pub_name, str(refused))
        log.info("pub %s/%s admitted %s of pod %s", ns, pub_name, operation.value, pod_name)
        return None
