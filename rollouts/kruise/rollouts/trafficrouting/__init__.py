"""TrafficRouting (``rollouts.kruise.io/v1alpha1``): routes shared by Rollouts that name it.

``links`` (pure): which Rollouts hold a TrafficRouting and the strategy in force; ``phases`` (pure):
the phase machine; ``routes``: the routers over the API server; ``controller``: the shell.
"""
