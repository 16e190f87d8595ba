package pgtest

import "syscall"

// sysProcAttr makes the kernel kill the server when the test binary dies, so
// a crashed test leaves no server behind. It fires when the starting OS
// thread exits, which Go does only for goroutines locked to their thread:
// this package locks none.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
