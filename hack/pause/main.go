// Command pause is the sandbox ("infra") process of a pod on the local real node.
//
// It holds the pod's namespaces open and does nothing else: it waits for SIGINT or
// SIGTERM and exits 0, and, as PID 1 of a pod that shares its process namespace, reaps
// the children that are reparented to it. Built statically (CGO_ENABLED=0) by
// hack/build-tools.sh and packed into the image kruise.local/pause by the cluster.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		os.Stdout.WriteString("kruise-pause\n")
		return
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
