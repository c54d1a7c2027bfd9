"""Advanced DaemonSet (``apps.kruise.io/v1alpha1``): one pod per eligible node, rolled out in place or
by recreation, with partition, pause, node-selector rollout, surge and lifecycle hooks.

Pure parts: :mod:`.nodes` (eligibility), :mod:`.strategy` (numbers), :mod:`.daemonpods` (pods),
:mod:`.status` and :mod:`.plan` (the decision); the shell is :mod:`.controller`.
"""
