package parser_test

import (
	"fmt"

	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
)

func ExampleParse() {
	stmts, err := parser.Parse(`SELECT * FROM trades ASOF LEFT JOIN quotes
    ON ts BETWEEN INTERVAL '-5 seconds' AND INTERVAL '0 seconds' USING (sym) PREFER LATER`)
	if err != nil {
		panic(err)
	}
	st := stmts[0]
	a := st.Asof[0]
	fmt.Println(a.Kind, a.Form, a.On.Name.O, a.Using[0].Name.O, a.Prefer)
	for _, b := range []int{a.LoPos, a.HiPos} {
		fmt.Println("bound at", b)
	}
	for _, c := range st.Casts {
		if c.Call == a.Lo {
			fmt.Println("lo:", c.Type, "literal:", c.Literal)
		}
	}

	_, err = parser.Parse("SELECT * FROM trades ASOF JOIN quotes WHERE x")
	e, _ := sqlerr.As(err)
	fmt.Println(e.Code, e.Message, "at", e.Position)
	// Output:
	// LEFT range ts sym LATER
	// bound at 62
	// bound at 88
	// lo: interval literal: true
	// 42601 ASOF JOIN requires an ON or USING clause at 22
}
