package lower

import (
	"sync"

	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/planner"
)

// Memo keeps what lowering one plan can reuse the next time the same plan
// is lowered: a prepared statement's kept plan (the root package's plan
// cache) is lowered at every execution, and for cheap plans such as
// SELECT 1 or a single-row lookup building the operators' schemas is a
// good part of an execution's cost. It holds only what depends on the
// plan's nodes and is checked against what the operators compile (the
// projections' output schemas), never rows, parameters or snapshots, so
// reusing it cannot change a result. A Memo belongs to one plan and is
// safe for concurrent lowerings of it; the zero value is empty.
type Memo struct {
	mu       sync.Mutex
	projects map[*planner.Project]*exec.ProjectMemo
}

// project is n's projection memo; nil for a nil Memo.
func (m *Memo) project(n *planner.Project) *exec.ProjectMemo {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.projects[n]
	if p == nil {
		if m.projects == nil {
			m.projects = map[*planner.Project]*exec.ProjectMemo{}
		}
		p = &exec.ProjectMemo{}
		m.projects[n] = p
	}
	return p
}

// Len is the number of plan nodes m keeps something for.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.projects)
}
