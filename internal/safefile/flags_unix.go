//go:build unix

package safefile

import "syscall"

// openFlags: do not wait for a FIFO's other end (the check after open
// refuses it), do not take a terminal as the controlling one, and do not
// follow a final symbolic link that replaced the checked file.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_NOFOLLOW
