//go:build !linux

package main

// physicalMemory is the machine's RAM in bytes, 0 when unknown (here:
// always, so --memory-limit auto means no limit).
func physicalMemory() int64 { return 0 }
