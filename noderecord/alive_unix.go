//go:build unix

package noderecord

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process of that PID runs (signal 0 checks without
// sending anything; EPERM means it runs as someone else).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
