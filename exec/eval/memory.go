package eval

import (
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/memacct"
)

// checkMemory is 53200 once the query whose account mem is holds more
// than it may; nil without an account.
func checkMemory(mem memory.Allocator) error {
	if a := memacct.Of(mem); a != nil {
		return a.Check("an expression")
	}
	return nil
}

// needMemory is 53200 when n more bytes, the size of a value a kernel is
// about to build, would take the query past its limit. Kernels whose
// output grows with an argument's value rather than with their input's
// size call it before building (lpad and rpad of a huge length).
func (c *call) needMemory(what string, n int64) error {
	if a := memacct.Of(c.mem); a != nil {
		return a.Need(what, n)
	}
	return nil
}
