package asofsql_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sql/functions"
)

// TestFunctionExamples runs every example of every scalar function
// (functions.All) through the whole engine: planner, lower, evaluator.
// So every function the planner accepts is known to have a working kernel
// and to give its documented result, and a new function without an
// example, or missing from the docs, fails here.
func TestFunctionExamples(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	var docs []byte
	for _, f := range []string{"docs/sql.md", "docs/clients.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b...)
	}
	for _, d := range functions.All() {
		if !d.Internal && !regexp.MustCompile(`\b`+d.Name+`\b`).Match(docs) {
			t.Errorf("%s: docs/sql.md (or docs/clients.md) does not list it", d.Name)
		}
		if d.Prepare == nil || (d.Rule == nil) != d.Internal {
			t.Errorf("%s: needs a Prepare, and a Rule unless it is internal", d.Name)
		}
		if len(d.Examples) == 0 {
			t.Errorf("%s: no example", d.Name)
		}
		calls := ""
		for _, ex := range d.Examples {
			calls += ex.Call + "\n"
			// The example must call d itself, not a look-alike.
			plan, err := sessRows(t, s, "EXPLAIN SELECT "+ex.Call)
			if err != nil {
				t.Errorf("%s: EXPLAIN SELECT %s: %v", d.Name, ex.Call, err)
				continue
			}
			if !strings.Contains(strings.Join(plan, "\n"), d.Name+"(") {
				t.Errorf("%s: SELECT %s does not call it:\n%s", d.Name, ex.Call, strings.Join(plan, "\n"))
			}
			got, err := sessRows(t, s, "SELECT "+ex.Call)
			if err != nil {
				t.Errorf("%s: SELECT %s: %v", d.Name, ex.Call, err)
				continue
			}
			if len(got) != 1 || got[0] != ex.Want {
				t.Errorf("%s: SELECT %s = %q, want %q", d.Name, ex.Call, got, ex.Want)
			}
		}
		for _, a := range d.Aliases {
			if !regexp.MustCompile(`(^|[^a-z_])` + a + `([^a-z_]|$)`).MatchString(strings.ToLower(calls)) {
				t.Errorf("%s: no example calls it as %s", d.Name, a)
			}
		}
	}
}
