"""API resources of Kruise Rollouts served by this product."""

from __future__ import annotations

from kruise.core.kube.resources import Resource

ROLLOUTS = Resource("rollouts.kruise.io", "v1beta1", "rollouts", "Rollout")
BATCH_RELEASES = Resource("rollouts.kruise.io", "v1beta1", "batchreleases", "BatchRelease")
HPAS_V2 = Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler")
HPAS_V1 = Resource("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler")
TRAFFIC_ROUTINGS = Resource("rollouts.kruise.io", "v1alpha1", "trafficroutings", "TrafficRouting")
ROLLOUT_HISTORIES = Resource("rollouts.kruise.io", "v1alpha1", "rollouthistories", "RolloutHistory")
