package sqltypes

// CompareFloat orders two floats as Postgres' float4/float8 comparison
// operators do (float8_cmp_internal): NaN sorts above every number and
// equals itself, -0 equals 0. It returns -1, 0 or +1. Every part of the
// engine that orders floats (expressions, sort, aggregates, storage
// statistics) uses it, so they agree with the = and < of SQL.
func CompareFloat[T float32 | float64](a, b T) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
