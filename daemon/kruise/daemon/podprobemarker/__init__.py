"""PodProbeMarker and NodePodProbe, manager side: the webhook and the two controllers."""
