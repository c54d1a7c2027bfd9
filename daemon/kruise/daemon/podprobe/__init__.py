"""kruise-daemon's pod probes: runs its node's NodePodProbe probes and writes their results."""
