package jsrun

// sql.go runs one statement of a db call on the attempt's connection and
// says what SQLite said when it refused: a constraint error with its
// extended code's name, as the handler API promises.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ncruces/go-sqlite3"
)

type mode int

const (
	modeRun mode = iota // every row stepped through, none kept
	modeGet             // the first row
	modeAll             // every row
)

// column is one value of a row, under its column's name.
type column struct {
	name  string
	value any // int64, float64, string or nil
}

type result struct {
	rows    [][]column
	changes int64
	lastID  int64
}

// sqlError is a statement SQLite refused, or one the lab refused before
// SQLite saw it (a parameter of a type SQL has no place for). Code is the
// extended code's name for a constraint violation ("SQLITE_CONSTRAINT_UNIQUE"),
// empty otherwise.
type sqlError struct {
	code string
	msg  string
}

func (e *sqlError) Error() string { return e.msg }

func (e *sqlError) constraint() bool { return strings.HasPrefix(e.code, "SQLITE_CONSTRAINT") }

// constraintNames names SQLite's extended constraint codes as SQLite's
// documentation does (https://sqlite.org/rescode.html).
var constraintNames = map[sqlite3.ExtendedErrorCode]string{
	sqlite3.CONSTRAINT_CHECK:      "SQLITE_CONSTRAINT_CHECK",
	sqlite3.CONSTRAINT_COMMITHOOK: "SQLITE_CONSTRAINT_COMMITHOOK",
	sqlite3.CONSTRAINT_FOREIGNKEY: "SQLITE_CONSTRAINT_FOREIGNKEY",
	sqlite3.CONSTRAINT_FUNCTION:   "SQLITE_CONSTRAINT_FUNCTION",
	sqlite3.CONSTRAINT_NOTNULL:    "SQLITE_CONSTRAINT_NOTNULL",
	sqlite3.CONSTRAINT_PRIMARYKEY: "SQLITE_CONSTRAINT_PRIMARYKEY",
	sqlite3.CONSTRAINT_TRIGGER:    "SQLITE_CONSTRAINT_TRIGGER",
	sqlite3.CONSTRAINT_UNIQUE:     "SQLITE_CONSTRAINT_UNIQUE",
	sqlite3.CONSTRAINT_VTAB:       "SQLITE_CONSTRAINT_VTAB",
	sqlite3.CONSTRAINT_ROWID:      "SQLITE_CONSTRAINT_ROWID",
	sqlite3.CONSTRAINT_PINNED:     "SQLITE_CONSTRAINT_PINNED",
	sqlite3.CONSTRAINT_DATATYPE:   "SQLITE_CONSTRAINT_DATATYPE",
}

// asSQLError turns what the driver returned into the handler's view of it.
func asSQLError(err error) *sqlError {
	var se *sqlError
	if errors.As(err, &se) {
		return se
	}
	e := &sqlError{msg: sqliteMessage(err)}
	var sq *sqlite3.Error
	if errors.As(err, &sq) && sq.Code() == sqlite3.CONSTRAINT {
		e.code = constraintNames[sq.ExtendedCode()]
		if e.code == "" {
			e.code = "SQLITE_CONSTRAINT"
		}
	}
	return e
}

// sqliteMessage is SQLite's own message, without the driver's prefix that
// repeats the code ("sqlite3: constraint failed: ").
func sqliteMessage(err error) string {
	var sq *sqlite3.Error
	if !errors.As(err, &sq) {
		return err.Error()
	}
	s := sq.Error()
	for _, prefix := range []string{sq.ExtendedCode().Error() + ": ", sq.Code().Error() + ": "} {
		if rest, ok := strings.CutPrefix(s, prefix); ok {
			return rest
		}
	}
	return s
}

// execute runs one statement with its parameters bound in order.
func execute(c *sqlite3.Conn, sql string, params []any, m mode) (result, error) {
	st, tail, err := c.Prepare(sql)
	if err != nil {
		return result{}, asSQLError(err)
	}
	if st == nil {
		return result{}, &sqlError{msg: "the statement is empty"}
	}
	defer st.Close()
	if strings.TrimSpace(strings.TrimRight(tail, "; \t\r\n")) != "" {
		return result{}, &sqlError{msg: "one statement per call: the SQL goes on after the first ';'"}
	}
	if n := st.BindCount(); n != len(params) {
		return result{}, &sqlError{msg: fmt.Sprintf("the statement has %d ? placeholders and the call passed %d parameters", n, len(params))}
	}
	for i, p := range params {
		var err error
		switch v := p.(type) {
		case nil:
			err = st.BindNull(i + 1)
		case int64:
			err = st.BindInt64(i+1, v)
		case float64:
			err = st.BindFloat(i+1, v)
		case string:
			err = st.BindText(i+1, v)
		default:
			return result{}, &sqlError{msg: fmt.Sprintf("parameter %d is a %T: bind numbers, strings or null", i+1, p)}
		}
		if err != nil {
			return result{}, asSQLError(err)
		}
	}
	var res result
	for st.Step() {
		if m == modeRun || (m == modeGet && len(res.rows) == 1) {
			continue
		}
		row := make([]column, st.ColumnCount())
		for i := range row {
			row[i].name = st.ColumnName(i)
			switch st.ColumnType(i) {
			case sqlite3.INTEGER:
				row[i].value = st.ColumnInt64(i)
			case sqlite3.FLOAT:
				row[i].value = st.ColumnFloat(i)
			case sqlite3.TEXT, sqlite3.BLOB:
				row[i].value = st.ColumnText(i)
			}
		}
		res.rows = append(res.rows, row)
	}
	if err := st.Err(); err != nil {
		return result{}, asSQLError(err)
	}
	res.changes, res.lastID = c.Changes(), c.LastInsertRowID()
	return res, nil
}
