// Package sqlerr is asofsql's one error type: an error carrying a PostgreSQL
// SQLSTATE, a message, and optionally a detail, a hint and a 1-based character
// position in the statement text.
//
// Every package builds its errors here and wraps them with %w on the way up;
// only the wire edge (pgwire) flattens them into an ErrorResponse. Callers
// find the SQL error inside any wrapped chain with As or Code.
//
// Example:
//
//	err := sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", "quotes").
//		WithPosition(15)
//	wrapped := fmt.Errorf("planning: %w", err)
//	sqlerr.Code(wrapped) // "42P01"
package sqlerr
