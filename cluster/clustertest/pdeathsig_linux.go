package clustertest

import "syscall"

// sysProcAttr makes the kernel kill a server when the process that started it
// dies, so a test binary that crashes or is killed leaves no servers behind.
// The signal really fires when the starting OS thread exits; Go only ends a
// thread when a goroutine exits while locked to it, which this package never
// does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
