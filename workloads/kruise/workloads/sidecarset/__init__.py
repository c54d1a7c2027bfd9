"""SidecarSet: sidecars injected into pods at creation and upgraded in place afterwards.

Pure modules (data in, data out; unit-tested on their own):

- :mod:`.keys`: the well-known annotation, label, env and condition names;
- :mod:`.podinfo`: what a pod records about its SidecarSets (hash annotations, injected list,
  in-place update state, hot-upgrade working containers);
- :mod:`.hashing`: the SidecarSet hashes (with and without images);
- :mod:`.matching`: which pods (and namespaces) a SidecarSet selects;
- :mod:`.inject`: the pod webhook's injection (``SidecarSetMutatingPod``);
- :mod:`.hotupgrade`: the ``-1``/``-2`` container pair of a hot-upgraded sidecar;
- :mod:`.podstate`: consistency, readiness and upgradability of an injected pod;
- :mod:`.upgrade`: the upgrade controller's decisions (:func:`~.upgrade.next_upgrades`, status);
- :mod:`.podupdate`: the pod an upgrade or a hot-upgrade flip writes;
- :mod:`.history`: the SidecarSet's ControllerRevisions and restoring a stored revision;
- :mod:`.scope`: which pods the API server sends to the pod webhook (CEL match conditions).

Shells: :mod:`.controller` (the upgrade controller) and :mod:`.webhooks` (SidecarSet admission
and the SidecarSet mutator of the shared pod webhook).
"""
