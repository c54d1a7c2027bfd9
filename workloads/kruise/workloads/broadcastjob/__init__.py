"""BroadcastJob (``apps.kruise.io/v1alpha1``): one pod per eligible node, run to completion.

:mod:`.plan` is the pure core (which nodes, which pods to create or delete, the status),
:mod:`.controller` the shell, :mod:`.webhooks` the admission adapter.
"""
