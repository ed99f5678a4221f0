package limits

import (
	"context"
	"fmt"

	"github.com/asofsql/asofsql/sqlerr"
)

// MaxDepth is how deep a statement may nest: expressions within
// expressions, queries within queries, joins within joins, CTEs naming
// CTEs. PostgreSQL's default 2MB max_stack_depth gives out between about
// 1,000 (nested subqueries) and 10,000 (operators) levels; its grammar
// stops right-nested input at 10,000 parser states. The deepest walk
// here costs about 2 KB of goroutine stack a level, so a statement at the
// limit stays under ~10 MB of stack (TestStackBudget checks the bound
// with a lowered runtime stack limit).
const MaxDepth = 4000

// MaxTokens is the most tokens one statement may have. PostgreSQL has no
// such limit below its 1 GB string size; asofsql holds every token, the
// TiDB syntax tree and the bound plan in memory at once (some hundreds of
// bytes a token), so it refuses statements past this size up front.
// Four million tokens is a 10-20 MB statement, e.g. an IN list of two
// million numbers or a multi-row INSERT of half a million short rows.
const MaxTokens = 4 << 20

// TickEvery is how many steps a Ticker lets pass between context checks.
const TickEvery = 1 << 12

// DepthError is PostgreSQL's 54001 for a statement nested deeper than
// MaxDepth. PostgreSQL's hint names max_stack_depth; asofsql's limit is a
// fixed nesting depth, so the hint says so instead.
func DepthError() *sqlerr.Error {
	return sqlerr.New(sqlerr.StatementTooComplex, "stack depth limit exceeded").
		WithHint("Statements may nest at most %d levels deep (asofsql's counterpart of max_stack_depth); write the statement with less nesting.", MaxDepth)
}

// TooManyTokens is the 54000 for a statement longer than MaxTokens.
func TooManyTokens(n int) *sqlerr.Error {
	return sqlerr.New(sqlerr.ProgramLimitExceeded, "statement is too long: %s tokens, the limit is %s", group(n), group(MaxTokens)).
		WithHint("Load large data with COPY, or split the statement.")
}

// group writes n with thousands separators.
func group(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Depth counts the recursion depth of one walk. The zero value is ready.
type Depth struct{ n int }

// Enter descends one level; past MaxDepth it returns DepthError and the
// caller must not recurse (Leave is still owed only when Enter succeeded).
func (d *Depth) Enter() error {
	if d.n >= MaxDepth {
		return DepthError()
	}
	d.n++
	return nil
}

// Leave climbs back one level.
func (d *Depth) Leave() { d.n-- }

// Level is the current depth.
func (d *Depth) Level() int { return d.n }

// Ticker checks a context every TickEvery calls of Tick, so a long loop
// observes cancellation and deadlines at a negligible cost. The zero value
// (no context) never fails.
type Ticker struct {
	ctx context.Context
	n   uint32
}

// NewTicker returns a Ticker over ctx (nil means never cancelled).
func NewTicker(ctx context.Context) *Ticker { return &Ticker{ctx: ctx} }

// Tick counts one step and, every TickEvery steps, returns the context's
// error as a 57014 *sqlerr.Error once it is cancelled or past its deadline.
func (t *Ticker) Tick() error {
	if t == nil || t.ctx == nil {
		return nil
	}
	t.n++
	if t.n%TickEvery != 0 {
		return nil
	}
	return t.Err()
}

// Context is the context t checks (nil for none).
func (t *Ticker) Context() context.Context {
	if t == nil || t.ctx == nil {
		return context.Background()
	}
	return t.ctx
}

// Err checks the context now.
func (t *Ticker) Err() error {
	if t == nil || t.ctx == nil {
		return nil
	}
	if err := t.ctx.Err(); err != nil {
		return sqlerr.From(err)
	}
	return nil
}
