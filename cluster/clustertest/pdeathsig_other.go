//go:build !linux

package clustertest

import "syscall"

// sysProcAttr has no parent-death signal outside Linux: there, servers of a
// test binary that dies without calling Stop keep running.
func sysProcAttr() *syscall.SysProcAttr {
	return nil
}
