"""WorkloadSpread (``apps.kruise.io/v1alpha1``): spread a workload's pods over ordered subsets.

:mod:`.subsets` holds the pure decisions (which subset a new pod gets, what is injected into it,
the per-subset accounting, pod deletion costs); :mod:`.versions` the per-revision accounting
(``versionedSubsetStatuses``); :mod:`.whitelist` the custom-workload white list;
:mod:`.validation` the validating webhook's rules.
"""
