package exec

// SetRangeBucketRows sets the rows the range sort aims at per bucket (so
// that small tests cut many buckets) and returns a function restoring it.
func SetRangeBucketRows(n int) (restore func()) {
	old := rangeBucketRows
	rangeBucketRows = n
	return func() { rangeBucketRows = old }
}
