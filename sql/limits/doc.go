// Package limits holds the front end's depth and size limits, the
// errors they raise and the small helpers every phase uses to honour
// them (sql/parser, sql/planner, exec/eval).
//
// A statement's text can be as deep as it is long: a million unary
// minus signs or parentheses is a 2 MB query. Each phase that walks it
// recursively (TiDB's parser and AST visitors, binding, constant
// folding, lowering, expression compilation) would recurse as deep, and
// a Go goroutine that outgrows its stack kills the whole process (the
// runtime's "goroutine stack exceeds 1000000000-byte limit" is fatal, not
// a panic). So the limit is checked before recursing, never caught after
// the fact:
//
//   - MaxDepth bounds nesting. sql/parser checks a cheap token-level
//     bound before TiDB parses (TiDB's own flag pass recurses over the
//     tree) and the exact tree depth right after; the planner and the
//     expression compiler count their own recursion with a Depth. Past
//     the limit: 54001 "stack depth limit exceeded", as PostgreSQL says
//     when its max_stack_depth (2MB) runs out.
//   - MaxTokens bounds a statement's length in tokens (54000 "statement
//     is too long").
//   - Ticker makes long linear phases observe cancellation and
//     statement_timeout: it checks the context every TickEvery steps.
//
// Example:
//
//	var d limits.Depth
//	func (b *binder) bind(n node) error {
//		if err := d.Enter(); err != nil {
//			return err // 54001
//		}
//		defer d.Leave()
//		...
//	}
package limits
