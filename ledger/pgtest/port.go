package pgtest

import (
	"fmt"
	"syscall"
)

// holdPort binds a socket to 127.0.0.1:port (0: a free port the kernel
// picks) and never listens on it. While it is open, connections to the port
// are refused, as to a stopped server, and the kernel gives the port to no
// outgoing connection and no listener on port 0: it skips ports bound this
// way. It returns the socket and the port; release closes it.
//
// SO_REUSEADDR lets it bind a port the server has just left with
// connections in TIME_WAIT. A process that names this very port and sets
// SO_REUSEADDR too could still bind it; nothing picks it by chance.
func holdPort(port int) (fd, bound int, err error) {
	fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("hold a port: %w", err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		_ = syscall.Close(fd)
		return -1, 0, fmt.Errorf("hold a port: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return -1, 0, fmt.Errorf("hold port %d: %w", port, err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return -1, 0, fmt.Errorf("hold a port: %w", err)
	}
	return fd, sa.(*syscall.SockaddrInet4).Port, nil
}

// release closes a socket of holdPort; -1 is none.
func release(fd int) {
	if fd >= 0 {
		_ = syscall.Close(fd)
	}
}
