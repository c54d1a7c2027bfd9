"""The daemon's image puller: pulls the tags its node's NodeImage lists and reports them in the
NodeImage status (upstream ``pkg/daemon/imagepuller``)."""
