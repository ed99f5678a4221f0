// Package expr is the bound, typed expression tree: the contract between
// the planner, which builds it from SQL, and the executor, which evaluates
// it over Arrow record batches. Nodes are plain data; nothing here
// evaluates anything.
//
// Contract:
//   - Every node has a SQL type (sqltypes.Type) fixed at bind time; the
//     planner inserts explicit Casts wherever Postgres would coerce
//     implicitly, so an evaluator never guesses.
//   - Column refers to a column of the operator's input batch by index.
//   - Literal values use the Arrow physical representation of their type
//     (see Literal), so evaluators broadcast them without conversion.
//   - Param is a $n placeholder; execution substitutes a Literal (Bind)
//     before evaluation.
//   - Semantics are PostgreSQL 15's: three-valued logic for AND/OR/NOT,
//     NULL in, NULL out for operators and most functions, errors for
//     integer overflow (22003) and division by zero (22012).
//
// Example: the bound form of `price * 1.5 > 10 AND sym = 'AAPL'`, where
// price is input column 2 (double precision) and sym column 1 (text):
//
//	expr.AndAll(
//		&expr.Binary{Op: expr.Gt, T: sqltypes.BoolType,
//			L: &expr.Binary{Op: expr.Mul, T: sqltypes.Float8Type,
//				L: &expr.Column{Index: 2, Name: "price", T: sqltypes.Float8Type},
//				R: &expr.Literal{Value: 1.5, T: sqltypes.Float8Type}},
//			R: &expr.Literal{Value: 10.0, T: sqltypes.Float8Type}},
//		&expr.Binary{Op: expr.Eq, T: sqltypes.BoolType,
//			L: &expr.Column{Index: 1, Name: "sym", T: sqltypes.TextType},
//			R: &expr.Literal{Value: "AAPL", T: sqltypes.TextType}})
package expr
