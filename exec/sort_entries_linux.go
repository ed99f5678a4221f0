package exec

import "golang.org/x/sys/unix"

// hugePage is the size of a transparent huge page on amd64 and arm64.
const hugePage = 2 << 20

// allocEntryBytes maps at least n bytes of anonymous memory (zeroed)
// outside the Go heap, a whole number of huge pages, and asks for
// transparent huge pages (a hint: the kernel may still use 4 KiB pages).
// If the mapping fails, it returns n bytes of the Go heap and mapped
// false.
func allocEntryBytes(n int) (b []byte, mapped bool) {
	size := (n + hugePage - 1) &^ (hugePage - 1)
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), false
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	return b, true
}

// freeEntryBytes unmaps b if mapped; the Go heap's is left to the GC.
func freeEntryBytes(b []byte, mapped bool) {
	if mapped {
		_ = unix.Munmap(b)
	}
}
