package asofsql

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// A session's prepared statements share one namespace, as in Postgres:
// those SQL PREPARE makes and those the wire protocol's Parse names
// (PrepareNamed). EXECUTE runs either kind, DEALLOCATE drops either, and
// DISCARD ALL drops them all (DISCARD PLANS only the plans they keep,
// plancache.go). The namespace is not transactional: a
// ROLLBACK keeps what the block prepared and does not bring back what it
// deallocated.

// namespace holds a session's prepared statements by name. Forks of a
// session (Fork) share it, as the statements of one client connection do,
// and may run at the same time: it is guarded by its own lock. A kept
// *Stmt does not change once it is in the namespace.
type namespace struct {
	mu sync.Mutex
	m  map[string]*Stmt
}

func newNamespace() *namespace { return &namespace{m: map[string]*Stmt{}} }

func (n *namespace) get(name string) (*Stmt, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st, ok := n.m[name]
	return st, ok
}

// add keeps st under name unless the name is taken (42P05).
func (n *namespace) add(name string, st *Stmt) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.m[name]; ok {
		return errPreparedExists(name)
	}
	n.m[name] = st
	return nil
}

// drop removes name; false when there was none.
func (n *namespace) drop(name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.m[name]
	delete(n.m, name)
	return ok
}

// dropPlans drops the plans the statements keep (DISCARD PLANS).
func (n *namespace) dropPlans() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, st := range n.m {
		st.cache.Store(nil)
	}
}

func (n *namespace) clear() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.m)
}

// maxExecuteDepth bounds EXECUTE of statements that are themselves
// EXECUTEs (wire statements can name each other in a cycle).
const maxExecuteDepth = 32

// PrepareNamed is Prepare that also keeps the statement under name (not
// "") in the session, where EXECUTE name finds it and DEALLOCATE drops it
// (the wire protocol's Parse of a named statement). A name already taken
// is 42P05. An empty sql keeps the empty statement (Stmt.Empty).
func (s *Session) PrepareNamed(ctx context.Context, name, sql string, paramTypes []sqltypes.Type) (*Stmt, error) {
	if _, ok := s.stmts.get(name); ok {
		return nil, errPreparedExists(name)
	}
	st, err := s.Prepare(ctx, sql, paramTypes)
	if err != nil {
		return nil, err
	}
	if st == nil {
		st = &Stmt{s: s, described: true}
	}
	if err := s.stmts.add(name, st); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// Prepared returns the statement kept under name (by PREPARE or
// PrepareNamed).
func (s *Session) Prepared(name string) (*Stmt, bool) {
	return s.stmts.get(name)
}

// Deallocate drops the statement kept under name; 26000 when there is
// none.
func (s *Session) Deallocate(name string) error {
	if !s.stmts.drop(name) {
		return planner.ErrNoPrepared(name)
	}
	return nil
}

func errPreparedExists(name string) error {
	return sqlerr.New(sqlerr.DuplicatePreparedStatement, "prepared statement \"%s\" already exists", name)
}

// keep runs PREPARE: st, described by plan and params, goes under name.
func (s *Session) keep(name string, st *Stmt, plan planner.Plan, params []sqltypes.Type) error {
	if _, ok := s.stmts.get(name); ok {
		return errPreparedExists(name)
	}
	st.describe(plan, params)
	return s.stmts.add(name, st)
}

// preparedShape is what planning EXECUTE needs of a kept statement.
func (s *Session) preparedShape(name string) (*planner.Prepared, bool) {
	st, ok := s.stmts.get(name)
	if !ok {
		return nil, false
	}
	return &planner.Prepared{Tag: st.tag, Shape: planner.Shape{Params: st.params, Columns: st.shape.Columns, Rows: st.shape.Rows}}, true
}

// executePlan finds EXECUTE's statement, evaluates the arguments and
// plans the statement on snap: what runs, and with which arguments.
func (s *Session) executePlan(ctx context.Context, snap *snapshot, p *planner.Execute, args []any) (*Stmt, planner.Plan, []any, error) {
	target, ok := s.stmts.get(p.Name)
	if !ok {
		// Dropped since the EXECUTE was planned (a wire statement).
		return nil, nil, nil, planner.ErrNoPrepared(p.Name)
	}
	if target.Empty() {
		return nil, nil, nil, sqlerr.New(sqlerr.SyntaxError, "empty query").
			WithDetail("Prepared statement \"%s\" holds no statement.", p.Name)
	}
	if s.executing >= maxExecuteDepth {
		return nil, nil, nil, sqlerr.New("54001", "stack depth limit exceeded").
			WithDetail("EXECUTE ran prepared statements that EXECUTE others %d deep.", s.executing)
	}
	var vals []any
	if p.Args != nil {
		op, err := s.lowerQuery(ctx, snap, p.Params, p.Args, args, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		err = exec.Drain(ctx, op, func(b arrow.RecordBatch) error {
			if b.NumRows() == 0 {
				return nil
			}
			var err error
			vals, err = argsOf(b)
			return err
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	// Planned in this session (its settings and block), which is not
	// the one that prepared target when s is a fork.
	inner, err := target.planOn(ctx, s, snap)
	if err != nil {
		return nil, nil, nil, err
	}
	// A prepared statement's declared parameters beyond those it uses
	// are passed, not bound.
	return target, inner, vals[:min(len(vals), len(inner.Shape().Params))], nil
}
