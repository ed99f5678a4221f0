//go:build !linux

package pgwire

import "net"

// rawSocket is nc: raw socket calls are Linux only (rawsock_linux.go).
func rawSocket(nc net.Conn) net.Conn { return nc }
