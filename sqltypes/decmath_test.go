package sqltypes

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

func dec(t *testing.T, s string) Decimal {
	t.Helper()
	sc := 0
	for i := range s {
		if s[i] == '.' {
			sc = len(s) - i - 1
		}
	}
	n, err := decimal128.FromString(s, 38, int32(sc))
	require.NoError(t, err)
	return Decimal{Coef: n, Scale: int32(sc)}
}

// TestNumericMath checks values and result scales against PostgreSQL 15
// (each want was printed by a PG15 server for the same call).
func TestNumericMath(t *testing.T) {
	cases := []struct {
		name, fn string
		args     []string
		want     string // "" with code: an error
		code     string
	}{
		{"power int exp", "power", []string{"2.0", "3"}, "8.0000000000000000", ""},
		{"power int base", "power", []string{"2", "3.0"}, "8.0000000000000000", ""},
		{"power square", "power", []string{"2.5", "2"}, "6.2500000000000000", ""},
		{"power negative exp", "power", []string{"2.0", "-2"}, "0.2500000000000000", ""},
		{"power zero zero", "power", []string{"0.0", "0"}, "1.0000000000000000", ""},
		{"power zero frac", "power", []string{"0.0", "2.5"}, "0.0000000000000000", ""},
		{"power sqrt", "power", []string{"4.0", "0.5"}, "2.0000000000000000", ""},
		{"power big", "power", []string{"10.0", "20"}, "100000000000000000000.0000000000000000", ""},
		{"power frac", "power", []string{"2.0", "0.1"}, "1.0717734625362932", ""},
		{"power zero negative", "power", []string{"0", "-1"}, "", "2201F"},
		{"power negative frac", "power", []string{"-2", "0.5"}, "", "2201F"},
		{"power negative int", "power", []string{"-2", "3"}, "-8.0000000000000000", ""},
		{"power overflow", "power", []string{"10", "50"}, "", "22003"},
		{"exp 10", "exp", []string{"10.0"}, "22026.465794806717", ""},
		{"exp -10", "exp", []string{"-10.0"}, "0.00004539992976248485", ""},
		{"exp 0", "exp", []string{"0.0"}, "1.0000000000000000", ""},
		{"exp 1", "exp", []string{"1.0"}, "2.7182818284590452", ""},
		{"exp overflow", "exp", []string{"1000"}, "", "22003"},
		{"sqrt 4", "sqrt", []string{"4.0"}, "2.000000000000000", ""},
		{"sqrt 2", "sqrt", []string{"2.0"}, "1.414213562373095", ""},
		{"sqrt 0", "sqrt", []string{"0.0"}, "0.000000000000000", ""},
		{"sqrt big", "sqrt", []string{"100000000.00"}, "10000.00000000000", ""},
		{"sqrt small", "sqrt", []string{"0.0001"}, "0.01000000000000000", ""},
		{"sqrt negative", "sqrt", []string{"-1"}, "", "2201F"},
		{"ln 1", "ln", []string{"1.0"}, "0.0000000000000000", ""},
		{"ln 1.05", "ln", []string{"1.05"}, "0.048790164169432003", ""},
		{"ln 2", "ln", []string{"2.0"}, "0.6931471805599453", ""},
		{"ln 0.5", "ln", []string{"0.5"}, "-0.6931471805599453", ""},
		{"ln zero", "ln", []string{"0"}, "", "2201E"},
		{"ln negative", "ln", []string{"-1"}, "", "2201E"},
		{"log base", "log", []string{"10", "1000.0"}, "3.0000000000000000", ""},
		{"log 2", "log", []string{"2.0", "1024"}, "10.0000000000000000", ""},
		{"log base 1", "log", []string{"1", "10"}, "", "22012"},
		{"log10", "log10", []string{"100.0"}, "2.0000000000000000", ""},
		{"log10 small", "log10", []string{"0.001"}, "-3.0000000000000000", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := make([]Decimal, len(c.args))
			for i, a := range c.args {
				args[i] = dec(t, a)
			}
			n, rscale, err := NumericMath(c.fn, args, 1000)
			if c.code != "" {
				require.Error(t, err)
				require.Equal(t, c.code, sqlerr.Code(err), err.Error())
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, Decimal{Coef: n, Scale: int32(rscale)}.String())
		})
	}
}
