package postgres

import "idemlab/engine"

// A stmt is the text of one statement the store runs. Every one is
// prepared on each new connection (Open), by its text, so that running it
// costs one round trip from the first use on. Prepared by hand rather than
// left to pgx's statement cache: the cache forgets a statement whenever a
// run of it fails, and the claim's INSERT fails by design on every
// duplicate (23505), after which the next claim on that connection would
// pay two more round trips, to deallocate and to prepare it again.
type stmt string

// Statements on the ledger and the schema as a whole.
const (
	putAccount   stmt = "INSERT INTO accounts (id, balance) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET balance = excluded.balance"
	getAccount   stmt = "SELECT balance FROM accounts WHERE id = $1"
	transferByID stmt = "SELECT t.from_id, t.to_id, t.amount, t.created_at, t.customer, t.idem_key, a.balance FROM transfers t JOIN accounts a ON a.id = t.from_id WHERE t.id = $1"

	// ledger is the ledger transaction in one statement: the function
	// ledger_transfer (migration 2) locks the key and both accounts, moves
	// the money, records the transfer and completes the key. Run on its
	// own it is its own transaction: one round trip, one commit.
	ledger stmt = "SELECT outcome, payer_balance, new_id FROM ledger_transfer($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"

	// The ledger transaction in steps (DB.transferInSteps), for the
	// outcomes ledger_transfer leaves to the store.
	begin        stmt = "BEGIN ISOLATION LEVEL READ COMMITTED"
	commit       stmt = "COMMIT"
	rollback     stmt = "ROLLBACK"
	lockAccounts stmt = "SELECT id, balance FROM accounts WHERE id = ANY($1) ORDER BY id FOR UPDATE"
	nextID       stmt = "SELECT nextval(pg_get_serial_sequence('transfers', 'id'))"
	debit        stmt = "UPDATE accounts SET balance = balance - $2 WHERE id = $1"
	credit       stmt = "UPDATE accounts SET balance = balance + $2 WHERE id = $1"
	addTransfer  stmt = "INSERT INTO transfers (id, from_id, to_id, amount, created_at, customer, idem_key) VALUES ($1, $2, $3, $4, $5, $6, $7)"

	usage stmt = "SELECT (SELECT count(*) FROM " + keysTable + ") + (SELECT count(*) FROM " + looseKeysTable + ")," +
		" (SELECT count(*) FROM accounts), (SELECT count(*) FROM transfers)," +
		" (SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r')"
	snapshotAccounts  stmt = "SELECT id, balance FROM accounts ORDER BY id"
	snapshotTransfers stmt = "SELECT id, from_id, to_id, amount, created_at, customer, idem_key FROM transfers ORDER BY id"

	// The payment processor (DB.Charge). A repeated idempotency key inserts
	// nothing and returns no row, and the processor answers with the charge
	// that key made first; a call it declines (a payer short of funds, an
	// unknown account) inserts nothing either.
	charge stmt = "INSERT INTO " + chargesTable + " (idempotency_key, from_id, to_id, amount, created_at, customer, idem_key) SELECT $1::text, $2::text, $3::text, $4::bigint, $5::bigint, $6::text, $7::text" +
		" WHERE (SELECT balance FROM accounts WHERE id = $2) >= $4 AND EXISTS (SELECT 1 FROM accounts WHERE id = $3)" +
		" ON CONFLICT (idempotency_key) DO NOTHING RETURNING id"
	chargeByKey     stmt = "SELECT " + chargeColumns + " FROM " + chargesTable + " WHERE idempotency_key = $1"
	snapshotCharges stmt = "SELECT " + chargeColumns + " FROM " + chargesTable + " ORDER BY id"
)

// chargesTable is the simulated payment processor's record of charges.
const chargesTable = "processor_charges"

// recoveryTable holds the recovery points around payment calls.
const recoveryTable = "idem_recovery"

// Recovery points (DB.SaveRecoveryPoint, DB.LookupRecoveryPoint).
const (
	saveRecovery stmt = "INSERT INTO " + recoveryTable + " (scope, idem_key, owner, point, charge_id, at) VALUES ($1, $2, $3, $4, $5, $6)" +
		" ON CONFLICT (scope, idem_key) DO UPDATE SET owner = excluded.owner, point = excluded.point, charge_id = excluded.charge_id, at = excluded.at"
	lookupRecovery stmt = "SELECT owner, point, charge_id, at FROM " + recoveryTable + " WHERE scope = $1 AND idem_key = $2"
)

const chargeColumns = "id, from_id, to_id, amount, created_at, customer, idem_key, coalesce(idempotency_key, '')"

// Table names, as they appear in the SQL the traces show.
const (
	keysTable      = "idem_keys"
	looseKeysTable = "idem_keys_unconstrained"
)

const keyColumns = "scope, idem_key, customer, fingerprint, state, owner, lease_until, created_at, expires_at, status, headers, body, transfer_id"

// keyColumnsNoState is keyColumns without state: what code that keeps no
// in-progress state writes.
const keyColumnsNoState = "scope, idem_key, customer, fingerprint, owner, lease_until, created_at, expires_at, status, headers, body, transfer_id"

// keyStmts are the statements on one key table.
type keyStmts struct {
	lookup              stmt
	insert              stmt
	insertIgnore        stmt
	insertNoState       stmt
	insertIgnoreNoState stmt
	takeOver            stmt
	lockKey             stmt
	complete            stmt
	storeResponse       stmt
	release             stmt
	all                 stmt // every row, for Snapshot
	sweep               stmt // one step of the reaper
}

// stmts are all the key tables' statements, built once per DB.
type stmts struct {
	keys, looseKeys keyStmts
}

func (s *stmts) on(t engine.KeyTable) *keyStmts {
	if t == engine.TableLoose {
		return &s.looseKeys
	}
	return &s.keys
}

func newStmts() stmts {
	s := stmts{keys: newKeyStmts(keysTable), looseKeys: newKeyStmts(looseKeysTable)}
	// The reaper's sweep: a window of up to $3 rows after the cursor, of
	// which the expired ones ($4 is now) are deleted; the statement answers
	// how many it deleted, how many the window held and where it ended. The
	// constrained table's cursor is (scope, key) = ($1, $2); the
	// unconstrained table's is its id, $1 (and $2 is unused, so the two
	// statements bind alike). The expiry is tested on the row being deleted,
	// so a row that a takeover renewed meanwhile is re-checked and kept.
	const expired = " AND k.expires_at > 0 AND k.expires_at <= $4"
	s.keys.sweep = `WITH win AS (SELECT scope, idem_key FROM ` + keysTable + ` WHERE (scope, idem_key) > ($1, $2) ORDER BY scope, idem_key LIMIT $3),
		gone AS (DELETE FROM ` + keysTable + ` k USING win w WHERE k.scope = w.scope AND k.idem_key = w.idem_key` + expired + ` RETURNING 1)
		SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM win), coalesce(l.scope, ''), coalesce(l.idem_key, '')
		FROM (SELECT 1) one LEFT JOIN (SELECT scope, idem_key FROM win ORDER BY scope DESC, idem_key DESC LIMIT 1) l ON true`
	s.looseKeys.sweep = `WITH win AS (SELECT id FROM ` + looseKeysTable + ` WHERE id > $1::bigint ORDER BY id LIMIT $3),
		gone AS (DELETE FROM ` + looseKeysTable + ` k USING win w WHERE k.id = w.id` + expired + ` RETURNING 1)
		SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM win), coalesce((SELECT max(id) FROM win), 0)::text, $2::text`
	return s
}

// every is every statement the store runs, for Open to prepare.
func (s *stmts) every() []stmt {
	list := []stmt{putAccount, getAccount, transferByID, ledger, begin, commit, rollback, lockAccounts, nextID,
		debit, credit, addTransfer, usage, snapshotAccounts, snapshotTransfers, charge, chargeByKey, snapshotCharges,
		saveRecovery, lookupRecovery}
	for _, k := range []*keyStmts{&s.keys, &s.looseKeys} {
		list = append(list, k.lookup, k.insert, k.insertIgnore, k.insertNoState, k.insertIgnoreNoState, k.takeOver,
			k.lockKey, k.complete, k.storeResponse, k.release, k.all, k.sweep)
	}
	return list
}

func newKeyStmts(t string) keyStmts {
	insert := "INSERT INTO " + t + " (" + keyColumns + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
	insertNoState := "INSERT INTO " + t + " (" + keyColumnsNoState + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
	return keyStmts{
		lookup:              stmt("SELECT " + keyColumns + " FROM " + t + " WHERE scope = $1 AND idem_key = $2 ORDER BY created_at DESC LIMIT 1"),
		insert:              stmt(insert),
		insertIgnore:        stmt(insert + " ON CONFLICT DO NOTHING"),
		insertNoState:       stmt(insertNoState),
		insertIgnoreNoState: stmt(insertNoState + " ON CONFLICT DO NOTHING"),
		takeOver: stmt("UPDATE " + t + " SET customer = $3, fingerprint = $4, state = $5, owner = $6, lease_until = $7, created_at = $8, expires_at = $9," +
			" status = NULL, headers = NULL, body = NULL, transfer_id = NULL" +
			" WHERE scope = $1 AND idem_key = $2 AND ((expires_at > 0 AND expires_at <= $10) OR (state = 'in_progress' AND lease_until > 0 AND lease_until <= $10))"),
		lockKey: stmt("SELECT 1 FROM " + t + " WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND state = 'in_progress' FOR UPDATE"),
		// The completion fails (22012, division by zero) when it finds no
		// claim of this owner's to complete, which aborts the ledger's
		// transaction (DB.transferInSteps).
		complete: stmt("WITH done AS (UPDATE " + t + " SET state = 'completed', lease_until = 0, status = $4, headers = $5, body = $6, transfer_id = $7" +
			" WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND state = 'in_progress' RETURNING 1) SELECT 1 / count(*)::int FROM done"),
		storeResponse: stmt("UPDATE " + t + " SET status = $4, headers = $5, body = $6, transfer_id = $7 WHERE scope = $1 AND idem_key = $2 AND owner = $3"),
		release:       stmt("DELETE FROM " + t + " WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND state = 'in_progress'"),
		all:           stmt("SELECT " + keyColumns + " FROM " + t + " ORDER BY created_at, scope, idem_key"),
	}
}
