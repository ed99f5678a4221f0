package vec

import (
	"github.com/asofsql/asofsql/sqltypes"
)

// IsStringKind reports whether values of k are stored as Arrow strings
// (text, varchar and untyped literals).
func IsStringKind(k sqltypes.Kind) bool {
	return k == sqltypes.Text || k == sqltypes.Varchar || k == sqltypes.Unknown
}

// SameClass reports whether two types compare directly: equal kinds, or
// two string kinds.
func SameClass(a, b sqltypes.Type) bool {
	return a.Kind == b.Kind || (IsStringKind(a.Kind) && IsStringKind(b.Kind))
}
