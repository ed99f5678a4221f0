//go:build !linux

package pgwire

import "net"

// threadSocket is nc: a thread's own waits are Linux only
// (threadsock_linux.go).
func threadSocket(nc net.Conn, _ *threadPool) net.Conn { return rawSocket(nc) }

// threadSock is never made off Linux.
type threadSock struct{}

func (*threadSock) evictReq() {}
