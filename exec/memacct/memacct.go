package memacct

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
)

// Budget is the memory a server's queries share: the sum of what their
// accounts hold. A zero limit counts without bounding.
type Budget struct {
	limit int64
	used  atomic.Int64

	mu   sync.Mutex
	seq  uint64
	open map[*Account]struct{} // accounts not yet closed, for victim choice
}

// NewBudget returns a budget of limit bytes (0: unbounded).
func NewBudget(limit int64) *Budget {
	return &Budget{limit: max(limit, 0), open: map[*Account]struct{}{}}
}

// Limit is the budget's bound in bytes (0: none).
func (b *Budget) Limit() int64 { return b.limit }

// Used is what the budget's accounts hold now, in bytes.
func (b *Budget) Used() int64 { return b.used.Load() }

// Account is one query's memory: every Arrow buffer the query allocates
// through it (it is a memory.Allocator wrapping another) plus the Go-heap
// structures its operators charge explicitly with Grow. It is safe for
// concurrent use (parallel operators share one account).
//
// Allocations themselves never fail (Arrow's Allocator cannot); the
// query fails at its next check (Check, Grow or Need) once the account is
// over its limit or the budget over its own, which the evaluator and the
// operators make at least once a batch and before any allocation whose size
// grows with a value rather than with the rows of a batch.
type Account struct {
	mem    memory.Allocator
	budget *Budget // nil: no shared budget
	limit  int64   // memory_limit of the query, 0 for none
	seq    uint64  // order of opening on budget: the largest is the newest
	cancel context.CancelCauseFunc

	arrow    atomic.Int64 // bytes of live Arrow buffers
	explicit atomic.Int64 // bytes charged with Grow, returned by Shrink or Close
	// doomed is set when the budget chose this query to fail; every later
	// check returns it.
	doomed atomic.Pointer[sqlerr.Error]
	closed atomic.Bool
}

var _ memory.Allocator = (*Account)(nil)

// Open starts an account for one query on b (nil: no shared budget) that
// allocates from mem and holds at most limit bytes (0: no limit of its
// own). cancel, when not nil, is called with the 53200 error if the budget
// picks this query to fail while it is not checking (waiting for its
// client, say), so that it stops and returns its memory.
func Open(b *Budget, mem memory.Allocator, limit int64, cancel context.CancelCauseFunc) *Account {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	a := &Account{mem: mem, budget: b, limit: max(limit, 0), cancel: cancel}
	if b != nil {
		b.mu.Lock()
		b.seq++
		a.seq = b.seq
		b.open[a] = struct{}{}
		b.mu.Unlock()
	}
	return a
}

// Of returns the account behind mem, or nil when mem is not one.
func Of(mem memory.Allocator) *Account {
	a, _ := mem.(*Account)
	return a
}

// Limit is the query's own limit in bytes (0: none).
func (a *Account) Limit() int64 { return a.limit }

// Used is what the query holds now: live Arrow buffers and explicit
// charges, in bytes.
func (a *Account) Used() int64 { return a.arrow.Load() + a.explicit.Load() }

// ArrowBytes is the bytes of the query's live Arrow buffers; it is zero
// once every batch the query made is released.
func (a *Account) ArrowBytes() int64 { return a.arrow.Load() }

func (a *Account) add(counter *atomic.Int64, n int64) {
	counter.Add(n)
	if a.budget != nil && !a.closed.Load() {
		a.budget.used.Add(n)
	}
}

// Allocate implements memory.Allocator.
func (a *Account) Allocate(size int) []byte {
	b := a.mem.Allocate(size)
	a.add(&a.arrow, int64(len(b)))
	return b
}

// Reallocate implements memory.Allocator.
func (a *Account) Reallocate(size int, b []byte) []byte {
	old := len(b)
	nb := a.mem.Reallocate(size, b)
	a.add(&a.arrow, int64(len(nb)-old))
	return nb
}

// OverGoHeap reports whether the account's allocator is the Go allocator,
// whose Free is a no-op (the garbage collector owns the memory): a buffer
// freed through the account may then be kept by the caller and counted
// again with Charge instead of allocated afresh (operator.Pool does, so
// that a query's output buffers are the previous query's pages, not new
// ones to fault in).
func (a *Account) OverGoHeap() bool {
	_, ok := a.mem.(*memory.GoAllocator)
	return ok
}

// Charge counts n bytes of a Go-heap buffer the caller kept from an
// earlier Free (see OverGoHeap) as allocated through the account, as
// Allocate would have: freeing it through the account uncounts it.
func (a *Account) Charge(n int) { a.add(&a.arrow, int64(n)) }

// Free implements memory.Allocator.
func (a *Account) Free(b []byte) {
	a.add(&a.arrow, -int64(len(b)))
	a.mem.Free(b)
}

// Grow charges n bytes of Go-heap state that what names (an operator:
// "sort", "hash join") is about to hold, or fails with 53200 and charges
// nothing when that would take the query past its limit or the server past
// its budget.
func (a *Account) Grow(what string, n int64) error {
	if n <= 0 {
		a.Shrink(-n)
		return nil
	}
	if err := a.Need(what, n); err != nil {
		return err
	}
	a.add(&a.explicit, n)
	return nil
}

// Shrink returns n bytes charged with Grow.
func (a *Account) Shrink(n int64) {
	if n > 0 {
		a.add(&a.explicit, -n)
	}
}

// Need checks that n more bytes would fit, without charging them: a
// kernel calls it with the size of a value before building it.
func (a *Account) Need(what string, n int64) error {
	if e := a.doomed.Load(); e != nil {
		return e
	}
	if a.limit > 0 && a.Used()+n > a.limit {
		return a.overLimit(what, n)
	}
	if a.budget != nil && a.budget.limit > 0 && a.budget.used.Load()+n > a.budget.limit {
		return a.budget.overflow(a, what, n)
	}
	return nil
}

// Check fails with 53200 when the query already holds more than it may
// (its Arrow buffers grow without asking): the evaluator and the
// operators call it once a batch.
func (a *Account) Check(what string) error { return a.Need(what, 0) }

// Close ends the query: it no longer competes for the budget, which
// takes back everything the account holds. Charges Grow made that nobody
// returned are dropped; Arrow buffers still alive leave the budget but stay
// counted by the account (ArrowBytes) until freed: they now belong to
// whoever kept them (the catalog keeps the batches an INSERT wrote). Close
// is idempotent; the query's operators must be closed first.
func (a *Account) Close() {
	if !a.closed.CompareAndSwap(false, true) {
		return
	}
	n := a.explicit.Swap(0)
	if b := a.budget; b != nil {
		b.used.Add(-(n + a.arrow.Load()))
		b.mu.Lock()
		delete(b.open, a)
		b.mu.Unlock()
	}
}

func (a *Account) overLimit(what string, n int64) error {
	e := sqlerr.New(sqlerr.OutOfMemory, "out of memory")
	detail := "The query holds " + FormatBytes(a.Used())
	if n > 0 {
		detail += " and " + what + " needs " + FormatBytes(n) + " more"
	} else if what != "" {
		detail += " in " + what
	}
	return e.WithDetail("%s, past its memory_limit of %s (%d bytes).", detail, FormatBytes(a.limit), a.limit).
		WithHint("Lower the query's memory use, or raise memory_limit (SET memory_limit = '1GB') up to the server's limit.")
}

// overflow decides who fails when the budget's queries would hold more
// than it allows: the newest query among those not already failing and
// holding memory, so that older queries finish. The memory of queries already failing is
// counted as returned (they return it as soon as they stop). When the
// newest is another query, it is failed and cancelled and a is let
// through.
func (b *Budget) overflow(a *Account, what string, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		used := b.used.Load()
		var newest *Account
		for o := range b.open {
			if o.doomed.Load() != nil {
				used -= o.Used()
				continue
			}
			if o != a && o.Used() == 0 {
				continue // failing it would return nothing
			}
			if newest == nil || o.seq > newest.seq {
				newest = o
			}
		}
		if used+n <= b.limit {
			return nil
		}
		e := sqlerr.New(sqlerr.OutOfMemory, "out of memory").
			WithDetail("The server's queries together would hold more than its memory limit of %s (%d bytes); the newest query is cancelled.",
				FormatBytes(b.limit), b.limit).
			WithHint("Run the query again when fewer queries run, or lower its memory use.")
		if newest == nil || newest == a || a.closed.Load() {
			return e
		}
		newest.doomed.Store(e)
		if newest.cancel != nil {
			newest.cancel(e)
		}
	}
}

// FormatBytes prints a byte count as PostgreSQL prints memory settings:
// in the largest unit (kB, MB, GB, TB) that divides it exactly.
func FormatBytes(n int64) string {
	units := []struct {
		name string
		n    int64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}}
	if n == 0 {
		return "0"
	}
	for _, u := range units {
		if n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

type ctxKey struct{}

// NewContext returns ctx carrying a: the account of the query ctx runs.
func NewContext(ctx context.Context, a *Account) context.Context {
	return context.WithValue(ctx, ctxKey{}, a)
}

// FromContext returns the account ctx carries, or nil.
func FromContext(ctx context.Context) *Account {
	a, _ := ctx.Value(ctxKey{}).(*Account)
	return a
}
