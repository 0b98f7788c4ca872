// Package sqlitemigrate applies numbered schema migrations to a SQLite
// connection, PRAGMA user_version counting them. The bank's store
// (store/sqlite) and the classroom's rooms file (classroom/roomdb) both use
// it; neither imports the other.
package sqlitemigrate

import (
	"errors"
	"fmt"

	"github.com/ncruces/go-sqlite3"
)

// Migrate brings conn's schema up to the last of migrations, each in its
// own transaction with its user_version, and refuses a file written by a
// newer idemlab. Migrations are appended, never edited.
func Migrate(conn *sqlite3.Conn, migrations []string) error {
	stmt, _, err := conn.Prepare("PRAGMA user_version")
	if err != nil {
		return err
	}
	v := 0
	if stmt.Step() {
		v = stmt.ColumnInt(0)
	}
	err = errors.Join(stmt.Err(), stmt.Close())
	if err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this idemlab's %d", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		sql := "BEGIN IMMEDIATE;" + migrations[i] + fmt.Sprintf(";PRAGMA user_version=%d;COMMIT;", i+1)
		if err := conn.Exec(sql); err != nil {
			conn.Exec("ROLLBACK")
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return nil
}
