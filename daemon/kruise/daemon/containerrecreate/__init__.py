"""ContainerRecreateRequest execution on a node: the pure core and the daemon's controller."""
