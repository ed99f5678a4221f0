package parser

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
)

// restore renders an AST expression back to SQL for assertions.
func restore(n ast.Node) string {
	if n == nil {
		return "<nil>"
	}
	var sb strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreKeyWordLowercase|format.RestoreNameBackQuotes|format.RestoreStringWithoutCharset, &sb)); err != nil {
		return "!" + err.Error()
	}
	return sb.String()
}

func colNames(cs []*ast.ColumnName) string {
	var out []string
	for _, c := range cs {
		out = append(out, colText(c))
	}
	return "[" + strings.Join(out, ",") + "]"
}

// describeAsof is a one-line summary of an ASOF join for table tests.
func describeAsof(st *Statement, a *AsofJoin) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", a.Kind, a.Form)
	if a.On != nil {
		fmt.Fprintf(&b, " on=%s", colText(a.On))
	}
	if a.Left != nil {
		fmt.Fprintf(&b, " left=%s right=%s", colText(a.Left.Name), colText(a.Right.Name))
	}
	if a.Form == FormInequality {
		fmt.Fprintf(&b, " op=%s", a.Op)
	}
	if a.Off != nil {
		fmt.Fprintf(&b, " off=%s", restore(a.Off))
	}
	if a.Lo != nil || a.Hi != nil {
		fmt.Fprintf(&b, " lo=%s hi=%s", restore(a.Lo), restore(a.Hi))
	}
	if len(a.Using) > 0 {
		fmt.Fprintf(&b, " using=%s", colNames(a.Using))
	}
	for _, k := range a.Keys {
		op := "="
		if k.NullSafe {
			op = "<=>"
		}
		fmt.Fprintf(&b, " key=%s%s%s", colText(k.A.Name), op, colText(k.B.Name))
	}
	if len(a.Cands) > 1 {
		fmt.Fprintf(&b, " cands=%d", len(a.Cands))
	}
	for _, e := range a.Extra {
		fmt.Fprintf(&b, " extra=%s", restore(e))
	}
	if a.PreferExplicit {
		fmt.Fprintf(&b, " prefer=%s", a.Prefer)
	}
	return b.String()
}

// castList summarizes the casts of a statement, sorted.
func castList(st *Statement) string {
	var out []string
	for _, c := range st.Casts {
		lit := ""
		if c.Literal {
			lit = " literal"
		}
		out = append(out, fmt.Sprintf("%s::%s%s", restore(c.Expr), c.Type, lit))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
