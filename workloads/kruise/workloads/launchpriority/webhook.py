"""The pod webhook's container launch priority step (``mpod.kb.io``; see :mod:`.core`)."""

from __future__ import annotations

from typing import Any

from kruise.core.webhook import AdmissionRequest
from kruise.workloads.launchpriority.core import (
    ORDERED,
    PRIORITY_ANNOTATION,
    PRIORITY_ENV,
    inject,
    priorities,
)
from kruise.workloads.podwebhook import PodMutationError

__all__ = ["POD_TERM", "LaunchPriorityMutator"]

POD_TERM = (
    "((has(object.metadata.annotations) && "
    f"'{PRIORITY_ANNOTATION}' in object.metadata.annotations && "
    f"object.metadata.annotations['{PRIORITY_ANNOTATION}'] == '{ORDERED}') || "
    "(has(object.spec.containers) && object.spec.containers != null && "
    f"object.spec.containers.exists(c, has(c.env) && c.env.exists(e, e.name == '{PRIORITY_ENV}'))))"
)
"""CEL over the pod being created: true when it may ask for a launch order, so the pod webhook's
match condition (:func:`kruise.workloads.sidecarset.scope.pod_match_condition`) sends it. A pod
without ``containers`` is false here (the API server then refuses it with its own
``spec.containers: Required value``; an unguarded ``exists`` made the condition an error)."""


class LaunchPriorityMutator:
    """Injects ``KRUISE_CONTAINER_BARRIER`` env into the containers of a pod that asks for an
    order; must run after SidecarSet injection (upstream's order), so sidecars take part."""

    name = "container-launch-priority"

    async def mutate(self, pod: dict[str, Any], request: AdmissionRequest) -> bool:
        try:
            order = priorities(pod)
        except ValueError as err:
            raise PodMutationError(str(err)) from err
        if order is None:
            return False
        inject(pod, order)
        return True
