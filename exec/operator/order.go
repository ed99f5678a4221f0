package operator

// CmpFloat compares two floats in PostgreSQL's order: NaN equals NaN and
// sorts above every other value (+Inf included), -0 equals 0. It is the
// order of ORDER BY, comparisons, min/max and the storage engine's sort
// keys alike.
func CmpFloat[T ~float32 | ~float64](a, b T) int {
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
