package lower

import (
	"testing"

	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/stretchr/testify/require"
)

// TestCombinableAggsAgree: the planner splits exactly the aggregates the
// parallel hash aggregate can combine (the planner cannot import exec).
func TestCombinableAggsAgree(t *testing.T) {
	all := []string{"count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every", "stddev", "stddev_samp",
		"stddev_pop", "variance", "var_samp", "var_pop", "first", "last", "string_agg", "array_agg", "json_agg",
		"jsonb_agg", "json_object_agg", "percentile_cont", "percentile_disc", "mode", "corr", "covar_pop",
		"covar_samp", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope",
		"regr_sxx", "regr_syy", "regr_sxy"}
	for _, fn := range all {
		require.Equal(t, exec.CombinableAgg(fn, false), planner.CombinableAggs[fn], fn)
		require.False(t, exec.CombinableAgg(fn, true), fn)
	}
	for fn := range planner.CombinableAggs {
		require.Contains(t, all, fn)
	}
}
