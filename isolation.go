package asofsql

import (
	"strings"

	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// Transaction isolation, as Postgres names it. READ COMMITTED (the
// default; READ UNCOMMITTED is the same, as in Postgres): every statement
// reads the catalog as last committed when it starts. REPEATABLE READ and
// SERIALIZABLE: the transaction's first statement that reads (anything but
// SET, SHOW, FETCH/MOVE and transaction control, as Postgres' "first
// snapshot") takes one catalog snapshot, and every later statement of the
// block reads that same snapshot. A SERIALIZABLE transaction must not
// write (0A000): one snapshot makes a reader serializable, but asofsql
// has no conflict detection between writers. Writes in a REPEATABLE READ
// block are INSERT, COPY FROM and DDL, which conflict with nothing.
const (
	isoReadUncommitted = "read uncommitted"
	isoReadCommitted   = "read committed"
	isoRepeatableRead  = "repeatable read"
	isoSerializable    = "serializable"
)

// txModes are a transaction's modes.
type txModes struct {
	iso        string
	readOnly   bool
	deferrable bool
}

// defaultModes are the modes a transaction starts with: the
// default_transaction_* settings.
func (s *Session) defaultModes() txModes {
	ro, _ := parseBool(s.values["default_transaction_read_only"])
	d, _ := parseBool(s.values["default_transaction_deferrable"])
	return txModes{iso: s.values["default_transaction_isolation"], readOnly: ro, deferrable: d}
}

// modes are the modes in force: the open block's, or outside one the
// defaults every statement's own transaction starts with.
func (s *Session) modes() txModes {
	if s.tx != nil {
		return s.mode
	}
	return s.defaultModes()
}

// oneSnapshot reports an isolation level that reads one snapshot.
func oneSnapshot(iso string) bool { return iso == isoRepeatableRead || iso == isoSerializable }

// parseIsolation reads an isolation level as SET writes it.
func parseIsolation(name, v string) (string, error) {
	l := strings.Join(strings.Fields(strings.ToLower(v)), " ")
	switch l {
	case isoReadUncommitted, isoReadCommitted, isoRepeatableRead, isoSerializable:
		return l, nil
	}
	return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", name, v).
		WithHint("Available values: serializable, repeatable read, read committed, read uncommitted.")
}

func errBeforeQuery(what string) error {
	return sqlerr.New(sqlerr.ActiveSQLTransaction, "%s must be called before any query", what)
}

// setIsolation changes the open block's isolation level, which is only
// possible before its first snapshot (Postgres' check_XactIsoLevel).
// Outside a block it changes nothing: the statement's own transaction
// ends with it.
func (s *Session) setIsolation(iso string) error {
	if s.tx == nil || iso == s.mode.iso {
		return nil
	}
	if s.snapTaken {
		return errBeforeQuery("SET TRANSACTION ISOLATION LEVEL")
	}
	s.mode.iso = iso
	return nil
}

func (s *Session) setReadOnly(ro bool) error {
	if s.tx == nil {
		return nil
	}
	if !ro && s.mode.readOnly && s.snapTaken {
		return sqlerr.New(sqlerr.ActiveSQLTransaction, "transaction read-write mode must be set before any query")
	}
	s.mode.readOnly = ro
	return nil
}

func (s *Session) setDeferrable(d bool) error {
	if s.tx == nil {
		return nil
	}
	if s.snapTaken {
		return errBeforeQuery("SET TRANSACTION [NOT] DEFERRABLE")
	}
	s.mode.deferrable = d
	return nil
}

// setTransaction runs SET TRANSACTION (the block's modes, in the order
// Postgres applies them) and SET SESSION CHARACTERISTICS AS TRANSACTION
// (the defaults).
func (s *Session) setTransaction(p *planner.SetTransaction) error {
	if p.Session {
		if p.Isolation != "" {
			if err := s.apply(settings["default_transaction_isolation"], p.Isolation); err != nil {
				return err
			}
		}
		if p.ReadOnly != nil {
			if err := s.apply(settings["default_transaction_read_only"], onOff(*p.ReadOnly)); err != nil {
				return err
			}
		}
		if p.Deferrable != nil {
			return s.apply(settings["default_transaction_deferrable"], onOff(*p.Deferrable))
		}
		return nil
	}
	return s.applyModes(p.Isolation, p.ReadOnly, p.Deferrable)
}

// applyModes sets the open block's modes as written (BEGIN's, SET
// TRANSACTION's).
func (s *Session) applyModes(iso string, readOnly, deferrable *bool) error {
	if iso != "" {
		if err := s.setIsolation(iso); err != nil {
			return err
		}
	}
	if readOnly != nil {
		if err := s.setReadOnly(*readOnly); err != nil {
			return err
		}
	}
	if deferrable != nil {
		return s.setDeferrable(*deferrable)
	}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// takesSnapshot reports the plans that read with a snapshot, which fixes
// a transaction's isolation level (Postgres' PlannedStmtRequiresSnapshot).
func takesSnapshot(p planner.Plan) bool {
	switch p.(type) {
	case *planner.Set, *planner.Show, *planner.Transaction, *planner.SetTransaction, *planner.Fetch:
		return false
	}
	return true
}

// noteSnapshot records that the open block's statement p was planned on
// snap: the block's first snapshot, which a REPEATABLE READ or
// SERIALIZABLE block then keeps to the end.
func (s *Session) noteSnapshot(p planner.Plan, snap *catalog.Snapshot) error {
	if s.tx == nil || s.snapTaken || !takesSnapshot(p) {
		return nil
	}
	s.snapTaken = true
	if oneSnapshot(s.mode.iso) {
		held, err := snap.Clone()
		if err != nil {
			return err
		}
		s.txSnap = held
	}
	return nil
}

// checkWrite refuses a write the transaction's modes forbid; command
// names it as Postgres does ("INSERT", "COPY FROM").
func (s *Session) checkWrite(command string) error {
	m := s.modes()
	if m.readOnly {
		return sqlerr.New("25006", "cannot execute %s in a read-only transaction", command)
	}
	if m.iso == isoSerializable {
		return sqlerr.New(sqlerr.FeatureNotSupported, "%s in a SERIALIZABLE transaction is not supported", command).
			WithHint("asofsql runs SERIALIZABLE transactions read only, on one snapshot; write in a REPEATABLE READ or READ COMMITTED transaction.")
	}
	return nil
}
