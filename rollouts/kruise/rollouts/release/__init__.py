"""The vocabulary of a release, shared by the Rollout engine, the BatchRelease controls, the
advanced Deployment controller and the workload port: batch arithmetic (``batchplan``), plan
hashes (``hashing``), the workload's rollout-id (``rolloutid``), Kruise Rollouts' well-known names
(``constants``), small object readers (``objects``) and timestamps (``timefmt``).

Everything here is pure and imports no other ``kruise.rollouts`` package but ``api``; the packages
above it never import each other in a circle (import-linter, ``pyproject.toml``).
"""
