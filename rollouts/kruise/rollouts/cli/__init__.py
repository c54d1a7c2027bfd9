"""The ``kruise`` command line (also installed as ``kubectl-kruise``)."""
