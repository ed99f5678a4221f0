// Package sqltypes is asofsql's SQL type system: the PostgreSQL types the
// engine supports, their Arrow representation, their wire identity (OID,
// typlen, typmod), and the Postgres spelling of each.
//
// Contract:
//   - Every SQL type maps to exactly one Arrow type (Type.Arrow); columns
//     carry their exact SQL type in Arrow field metadata (Type.Field,
//     FromField) because Arrow alone cannot tell TEXT from VARCHAR(n).
//   - Values are stored as: BOOLEAN bool, SMALLINT/INTEGER/BIGINT int16/32/64,
//     REAL/DOUBLE float32/64, NUMERIC(p,s) decimal128(p,s), TEXT/VARCHAR utf8,
//     BYTEA binary, DATE date32, TIMESTAMP timestamp[us], TIMESTAMPTZ
//     timestamp[us, UTC] (instants; the session time zone only affects
//     input and output), INTERVAL month_day_nano.
//
// Example:
//
//	t, err := sqltypes.ParseTypeName("numeric(10,2)")
//	// t.Kind == sqltypes.Numeric, t.Arrow() is decimal128(10, 2),
//	// t.OID() == 1700, t.Typmod() == 655366, t.String() == "numeric(10,2)"
package sqltypes
