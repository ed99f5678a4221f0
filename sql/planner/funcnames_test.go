package planner

import (
	"os"
	"regexp"
	"testing"

	"github.com/asofsql/asofsql/sql/functions"
)

// TestPlannerFunctionsAreNotDefs: the functions the planner answers
// itself, the aggregates and the catalog functions, bind before a call
// is looked up in sql/functions, so a Def of the same name could never be
// called. The catalog functions, which no Def documents, must be in the
// user docs.
func TestPlannerFunctionsAreNotDefs(t *testing.T) {
	var docs []byte
	for _, f := range []string{"../../docs/sql.md", "../../docs/clients.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b...)
	}
	for name := range catalogFuncs {
		if _, ok := functions.Lookup(name); ok {
			t.Errorf("%s is both a catalog function and a functions.Def", name)
		}
		if !regexp.MustCompile(`\b` + name + `\b`).Match(docs) {
			t.Errorf("catalog function %s: docs/sql.md (or docs/clients.md) does not list it", name)
		}
	}
	for name := range aggFuncs {
		if _, ok := functions.Lookup(name); ok {
			t.Errorf("%s is both an aggregate and a functions.Def", name)
		}
	}
}
