package functions

import (
	"crypto/md5"
	"encoding/hex"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// MD5 is md5(text): the MD5 digest of the string's bytes, in hex.
var MD5 = register(&Def{
	Name: "md5", MinArgs: 1, MaxArgs: 1,
	Rule: fixed(text, text),
	Prepare: prepareIf(textMap(func(s string) string {
		sum := md5.Sum([]byte(s))
		return hex.EncodeToString(sum[:])
	}), stringKind, stringKind),
	Examples: []Example{{"md5('abc')", "900150983cd24fb0d6963f7d28e17f72"}, {"md5('')", "d41d8cd98f00b204e9800998ecf8427e"}, {"md5(NULL)", "NULL"}},
})

// NumNulls is num_nulls(a, ...): how many arguments are NULL, any types;
// NumNonNulls is num_nonnulls, how many are not.
var NumNulls = register(&Def{
	Name: "num_nulls", MinArgs: 1, MaxArgs: -1,
	Rule:     anyArgs(i4),
	Prepare:  prepareCountNulls(true),
	Examples: []Example{{"num_nulls(1, NULL, 'a', NULL::date)", "2"}},
})

// NumNonNulls is num_nonnulls(a, ...).
var NumNonNulls = register(&Def{
	Name: "num_nonnulls", MinArgs: 1, MaxArgs: -1,
	Rule:     anyArgs(i4),
	Prepare:  prepareCountNulls(false),
	Examples: []Example{{"num_nonnulls(1, NULL, 'a', NULL::date)", "2"}},
})

// anyArgs takes arguments of any types (an untyped literal as text) and
// returns res.
func anyArgs(res sqltypes.Type) Rule {
	return func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		for i := range args {
			args[i] = b.ResolveUnknown(args[i])
		}
		return args, res, nil
	}
}

func prepareCountNulls(nulls bool) func([]expr.Expr, sqltypes.Type) (Kernel, error) {
	return func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if t.Kind != sqltypes.Int4 {
			return nil, errTypes
		}
		return func(in Input) (arrow.Array, error) {
			buf, out := vec.NewFixed[int32](in.Mem(), in.Rows())
			clear(out)
			for a := range args {
				x, err := in.Arg(a)
				if err != nil {
					buf.Release()
					return nil, err
				}
				for i := range out {
					if x.IsNull(i) == nulls {
						out[i]++
					}
				}
				x.Release()
			}
			return vec.FinishFixed(in.Mem(), t.Arrow(), in.Rows(), buf, nil), nil
		}, nil
	}
}
