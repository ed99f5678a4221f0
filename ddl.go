package asofsql

import (
	"context"
	"slices"
	"strconv"

	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/lower"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/planner"
)

// This file runs the statements that change rows or definitions: the
// cases of dispatch for CREATE/DROP TABLE, DELETE, UPDATE, TRUNCATE,
// ALTER TABLE, CREATE TABLE AS and CREATE/DROP VIEW. Each writes through
// Session.writeTo, in the open block or on its own, to the database's
// catalog or, for temporary relations, the session's.

func (s *Session) createTable(ctx context.Context, snap *snapshot, p *planner.CreateTable) error {
	def := p.Def
	def.Columns = slices.Clone(def.Columns)
	for i, d := range p.Defaults {
		if d == nil {
			continue
		}
		text, err := s.defaultText(ctx, snap, d, def.Columns[i])
		if err != nil {
			return err
		}
		def.Columns[i].Default = text
	}
	_, existed := s.planCatalog(snap).lookup(p.Temp, def.Name)
	err := s.writeTo(ctx, "CREATE TABLE", p.Temp, func(tx *catalog.Tx) error { return tx.CreateTable(ctx, def, p.IfNotExists) })
	if err == nil && !existed { // IF NOT EXISTS on an existing table keeps it
		s.noteTable(def, 0, p.Temp, true)
	}
	return err
}

// defaultText evaluates a DEFAULT expression into the text the catalog
// keeps for column c.
func (s *Session) defaultText(ctx context.Context, snap *snapshot, e expr.Expr, c catalog.Column) (*string, error) {
	env, err := s.lowerEnv(ctx, snap, nil, nil)
	if err != nil {
		return nil, err
	}
	return lower.DefaultText(ctx, snap.main, e, c.Type, env)
}

// byTemp splits names into the database's and the session's.
func byTemp(names []string, temp []bool) (perm, tmp []string) {
	for i, n := range names {
		if i < len(temp) && temp[i] {
			tmp = append(tmp, n)
		} else {
			perm = append(perm, n)
		}
	}
	return perm, tmp
}

func (s *Session) dropTables(ctx context.Context, p *planner.DropTable) error {
	return s.dropRelations(ctx, "DROP TABLE", p.Names, p.Temp, false, func(tx *catalog.Tx, name string) error {
		return tx.DropTable(ctx, name, p.IfExists)
	})
}

func (s *Session) dropViews(ctx context.Context, p *planner.DropView) error {
	return s.dropRelations(ctx, "DROP VIEW", p.Names, p.Temp, true, func(tx *catalog.Tx, name string) error {
		return tx.DropView(ctx, name, p.IfExists)
	})
}

// dropRelations drops names (temp[i]: in the session's temporary catalog)
// with drop, one transaction per catalog, and records each in the open
// block.
func (s *Session) dropRelations(ctx context.Context, command string, names []string, temp []bool, view bool,
	drop func(tx *catalog.Tx, name string) error) error {
	perm, tmp := byTemp(names, temp)
	for _, part := range []struct {
		names []string
		temp  bool
	}{{perm, false}, {tmp, true}} {
		if len(part.names) == 0 {
			continue
		}
		err := s.writeTo(ctx, command, part.temp, func(tx *catalog.Tx) error {
			for _, name := range part.names {
				if err := drop(tx, name); err != nil {
					return err
				}
				s.noteDropped(name, part.temp, view)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) delete(ctx context.Context, snap *snapshot, p *planner.Delete, args []any) (int64, error) {
	env, err := s.lowerEnv(ctx, snap, p.Params, args)
	if err != nil {
		return 0, err
	}
	rows, err := lower.DeleteRows(ctx, snap.main, p, env)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.writeTo(ctx, "DELETE", p.Table.Temp, func(tx *catalog.Tx) error {
		if rows.None {
			return nil
		}
		var err error
		n, err = tx.Delete(ctx, p.Table.Name, catalog.DeleteOptions{Range: rows.Range, Where: rows.Where})
		return err
	})
	return n, err
}

func (s *Session) update(ctx context.Context, snap *snapshot, p *planner.Update, args []any) (int64, error) {
	env, err := s.lowerEnv(ctx, snap, p.Params, args)
	if err != nil {
		return 0, err
	}
	rows, err := lower.UpdateRows(ctx, snap.main, p, env)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.writeTo(ctx, "UPDATE", p.Table.Temp, func(tx *catalog.Tx) error {
		if rows.None {
			return nil
		}
		var err error
		n, err = tx.Update(ctx, p.Table.Name, catalog.UpdateOptions{Range: rows.Range, Where: rows.Where, Set: rows.Set})
		return err
	})
	return n, err
}

func (s *Session) truncate(ctx context.Context, p *planner.Truncate) error {
	for _, temp := range []bool{false, true} {
		var tables []*catalog.TableInfo
		for _, t := range p.Tables {
			if t.Temp == temp {
				tables = append(tables, t)
			}
		}
		if len(tables) == 0 {
			continue
		}
		err := s.writeTo(ctx, "TRUNCATE TABLE", temp, func(tx *catalog.Tx) error {
			for _, t := range tables {
				if err := tx.Truncate(ctx, t.Name); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) alterTable(ctx context.Context, snap *snapshot, p *planner.AlterTable) error {
	if p.Table == nil {
		return nil // ALTER TABLE IF EXISTS of a missing table
	}
	t := p.Table
	temp := t.Temp
	def := catalog.TableDef{Name: t.Name, Columns: slices.Clone(t.Columns), OrderBy: slices.Clone(t.OrderBy)}
	renamed := ""
	err := s.writeTo(ctx, "ALTER TABLE", temp, func(tx *catalog.Tx) error {
		for _, a := range p.Actions {
			switch a.Kind {
			case planner.AlterAddColumn:
				col := a.Column
				if a.DefaultExpr != nil {
					text, err := s.defaultText(ctx, snap, a.DefaultExpr, col)
					if err != nil {
						return err
					}
					col.Default = text
				}
				if err := tx.AddColumn(ctx, def.Name, col, a.IfExists); err != nil {
					return err
				}
				if !slices.ContainsFunc(def.Columns, func(c catalog.Column) bool { return c.Name == col.Name }) {
					def.Columns = append(def.Columns, col)
				}
			case planner.AlterDropColumn:
				if err := tx.DropColumn(ctx, def.Name, a.Name, a.IfExists); err != nil {
					return err
				}
				def.Columns = slices.DeleteFunc(def.Columns, func(c catalog.Column) bool { return c.Name == a.Name })
			case planner.AlterRenameColumn:
				if err := tx.RenameColumn(ctx, def.Name, a.Name, a.NewName); err != nil {
					return err
				}
				for i := range def.Columns {
					if def.Columns[i].Name == a.Name {
						def.Columns[i].Name = a.NewName
					}
				}
				for i := range def.OrderBy {
					if def.OrderBy[i] == a.Name {
						def.OrderBy[i] = a.NewName
					}
				}
			case planner.AlterRenameTable:
				if err := tx.RenameTable(ctx, def.Name, a.NewName); err != nil {
					return err
				}
				renamed = def.Name
				def.Name = a.NewName
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if renamed != "" {
		s.noteDropped(renamed, temp, false)
	}
	s.noteTable(def, t.ID, temp, s.block != nil && s.block.created[relKey{temp, t.Name}])
	return nil
}

// createTableAs runs CREATE TABLE AS: the tag is "SELECT n", or "CREATE
// TABLE AS" WITH NO DATA and when IF NOT EXISTS finds the table.
func (s *Session) createTableAs(ctx context.Context, snap *snapshot, p *planner.CreateTableAs, args []any) (string, int64, error) {
	if _, exists := s.planCatalog(snap).lookup(p.Temp, p.Def.Name); exists && p.IfNotExists {
		return "CREATE TABLE AS", 0, nil // PostgreSQL notices "already exists, skipping"
	}
	var n int64
	var err error
	if !p.WithData {
		err = s.writeTo(ctx, "CREATE TABLE AS", p.Temp, func(tx *catalog.Tx) error { return tx.CreateTable(ctx, p.Def, false) })
	} else {
		var op exec.Operator
		if op, err = s.lowerQuery(ctx, snap, p.Query.Params, p.Query.Root, args, nil); err != nil {
			return "", 0, err
		}
		if err := op.Open(ctx); err != nil {
			op.Close()
			return "", 0, err
		}
		rdr := exec.ToReader(ctx, op)
		defer rdr.Release()
		err = s.writeTo(ctx, "CREATE TABLE AS", p.Temp, func(tx *catalog.Tx) error {
			var err error
			n, err = tx.CreateTableAs(ctx, p.Def, rdr)
			return err
		})
	}
	if err != nil {
		return "", 0, err
	}
	s.noteTable(p.Def, 0, p.Temp, true)
	if !p.WithData {
		return "CREATE TABLE AS", 0, nil
	}
	return "SELECT " + strconv.FormatInt(n, 10), n, nil
}

func (s *Session) createView(ctx context.Context, p *planner.CreateView) error {
	err := s.writeTo(ctx, "CREATE VIEW", p.Temp, func(tx *catalog.Tx) error { return tx.CreateView(ctx, p.Def, p.OrReplace) })
	if err == nil {
		s.noteView(p.Def, p.Temp)
	}
	return err
}

// discardTemp runs DISCARD TEMP: every temporary table and view goes. In
// a block they are dropped in the block's temporary transaction, so a
// ROLLBACK brings them back.
func (s *Session) discardTemp(ctx context.Context, snap *snapshot) error {
	if s.temp == nil {
		return nil
	}
	if s.tx == nil {
		return s.dropTemp()
	}
	rels := s.planCatalog(snap)
	return s.writeTo(ctx, "DISCARD TEMP", true, func(tx *catalog.Tx) error {
		for _, v := range rels.TempViews() {
			if err := tx.DropView(ctx, v, true); err != nil {
				return err
			}
			s.noteDropped(v, true, true)
		}
		for _, t := range rels.TempTables() {
			if err := tx.DropTable(ctx, t, true); err != nil {
				return err
			}
			s.noteDropped(t, true, false)
		}
		return nil
	})
}
