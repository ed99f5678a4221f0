//go:build !linux

package pgwire

import "net"

// peerClosed cannot tell without reading on this platform: a client that
// hangs up is noticed when the reader next reads.
func peerClosed(net.Conn) bool { return false }
