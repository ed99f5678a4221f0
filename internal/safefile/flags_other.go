//go:build !unix

package safefile

// openFlags: the stat before opening and the check after it are what
// refuse irregular files here.
const openFlags = 0
