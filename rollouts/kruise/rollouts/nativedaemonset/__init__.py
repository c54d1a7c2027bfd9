"""The native DaemonSet controller: deletes a native DaemonSet's old pods batch by batch under a
Rollout's ``OnDelete`` hold (Kruise Rollouts' ``native-daemonset-controller``)."""
