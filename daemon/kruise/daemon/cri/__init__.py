"""CRI: the port the daemon uses to reach the node's container runtime, and its grpc adapter."""
