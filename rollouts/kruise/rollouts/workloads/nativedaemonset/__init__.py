"""Native ``apps/v1`` DaemonSets as a Rollout workload (Kruise Rollouts' native DaemonSet
progressive delivery, ``docs/proposals/20250924-native-daemonset-progressive-delivery.md``).

A native DaemonSet has no partition, so a release holds it with the ``OnDelete`` update strategy
(kube's DaemonSet controller then recreates a pod at the current template only once it is deleted)
and releases each batch by writing how many pods stay on the old revision into an annotation; the
native DaemonSet controller (:mod:`kruise.rollouts.nativedaemonset`) deletes old pods until that
many are left. :mod:`.marks` holds the annotations, :mod:`.revisions` finds the stable and canary
revisions among the DaemonSet's ControllerRevisions, :mod:`.kind` is the registry entry.
"""
