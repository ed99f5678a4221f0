package sqltypes

import "time"

// Param is a decoded statement parameter of type T, held without boxing
// (an `any` per parameter costs an allocation for most values): Null for
// NULL; else Int for BIGINT, INTEGER and SMALLINT, and for TIMESTAMP and
// TIMESTAMPTZ (microseconds since 1970-01-01 UTC); Float for DOUBLE
// PRECISION; Bool for BOOLEAN; Str for TEXT. Other types are not held
// this way. The wire server decodes Bind values into it (pgwire) and the
// engine takes them as they are (asofsql.Stmt.ExecuteParams).
type Param struct {
	T     Type
	Null  bool
	Int   int64
	Float float64
	Str   string
	Bool  bool
}

// Value is p as what row 0 of an Arrow array of type T holds, read as Go
// (nil for NULL): int64 for the integers and timestamps, float64, bool or
// string.
func (p Param) Value() any {
	if p.Null {
		return nil
	}
	switch p.T.Kind {
	case Float8:
		return p.Float
	case Bool:
		return p.Bool
	case Text:
		return p.Str
	}
	return p.Int
}

// GoValue is p as the natural Go value GoValue gives for it: Value but
// for timestamps, which are time.Time; nil for NULL.
func (p Param) GoValue() any {
	if !p.Null && (p.T.Kind == Timestamp || p.T.Kind == TimestampTZ) {
		return time.UnixMicro(p.Int).UTC()
	}
	return p.Value()
}
