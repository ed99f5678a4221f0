package asof

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/asofsql/asofsql"

// TestDependencies pins what the ASOF operator is built from: of this
// module, only the operator contract and the error package (no SQL
// expressions, SQL types or evaluator), and besides those only the
// standard library and arrow-go. It reads the import lists of the
// non-test Go files, following the module's own packages.
func TestDependencies(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(mod), "module "+modulePath+"\n"), "the module root is two levels up")
	seen := map[string]bool{}
	var walk func(pkg string)
	walk = func(pkg string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		dir := filepath.Join(root, strings.TrimPrefix(strings.TrimPrefix(pkg, modulePath), "/"))
		p, err := build.ImportDir(dir, 0)
		require.NoError(t, err, "package %s", pkg)
		for _, imp := range p.Imports {
			switch {
			case strings.HasPrefix(imp, modulePath+"/"):
				walk(imp)
			case strings.HasPrefix(imp, "github.com/apache/arrow-go/v18/"):
			case !strings.Contains(strings.Split(imp, "/")[0], "."):
				// the standard library
			default:
				t.Errorf("%s imports %s: only arrow-go and the standard library are allowed", pkg, imp)
			}
		}
	}
	walk(modulePath + "/exec/asof")
	var got []string
	for pkg := range seen {
		got = append(got, strings.TrimPrefix(pkg, modulePath+"/"))
	}
	slices.Sort(got)
	require.Equal(t, []string{"exec/asof", "exec/operator", "sqlerr"}, got,
		"exec/asof's dependencies in this module; see exec/operator's doc.go")
}
