"""The daemon's container-meta controller: reports runtime-containers-meta and restarts a
container whose env from pod metadata is stale (upstream ``pkg/daemon/containermeta``)."""
