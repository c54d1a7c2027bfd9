"""kopf glue for the advanced Deployment controller.

It reads the Rollout controllers' cache (Deployments by key, ReplicaSets by controller uid, see
:mod:`kruise.rollouts.rollout.handlers`), so it adds no index, only two event handlers that
enqueue a Deployment under partition-style control when it or one of its ReplicaSets changes.
No change-detecting handlers: kopf writes nothing onto objects.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import kopf

from kruise.core.cache import controller_ref
from kruise.rollouts.advanceddeployment.controller import AdvancedDeploymentController
from kruise.rollouts.rollout.handlers import KopfRolloutCache


def register(
    registry: kopf.OperatorRegistry, controller: AdvancedDeploymentController, cache: KopfRolloutCache
) -> None:
    """Register the event handlers and the worker pool into ``registry``."""

    @kopf.on.event("apps", "v1", "deployments", registry=registry, id="advanced_deployment_event")
    def on_deployment(**kwargs: Any) -> None:
        cache.bind(kwargs)
        if kwargs["body"].get("metadata") and controller.wants(kwargs["body"]):
            controller.enqueue(f"{kwargs['namespace']}/{kwargs['name']}")

    @kopf.on.event("apps", "v1", "replicasets", registry=registry, id="advanced_deployment_rs_event")
    def on_replicaset(**kwargs: Any) -> None:
        cache.bind(kwargs)
        owner = controller_ref(kwargs["body"], ("Deployment",))
        if owner is None:
            return
        key = f"{kwargs['namespace']}/{owner.get('name')}"
        deployment = cache.deployment(key)
        if deployment is not None and controller.wants(deployment):
            controller.enqueue(key)

    tasks: list[asyncio.Task[None]] = []

    @kopf.on.startup(registry=registry, id="advanced_deployment_workers")
    async def start(**_: Any) -> None:
        tasks.append(asyncio.create_task(controller.run(cache.ready), name=controller.name))

    @kopf.on.cleanup(registry=registry, id="advanced_deployment_workers_stop")
    async def stop(**_: Any) -> None:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
