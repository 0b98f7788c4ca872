package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"idemlab/engine"
)

// ledgerTransferDDL is migration 2: the ledger transaction as a function,
// so that it runs as one statement, in one round trip and one commit, and
// holds the accounts' row locks only while PostgreSQL executes it, never
// across a round trip to the app server. It takes the locks that
// transferInSteps takes, in the same order (the key, then both accounts in
// id order; see the package comment), and checks the same things.
//
// The completion writes the response the engine rendered before the call,
// with holes where the transfer's id and the payer's balance go
// (responseTemplate): the body is c_parts[1], then for each hole its value
// and the next part. The id is written as engine.TransferID writes it.
//
// Its tables are found on the caller's search_path, which each pooled
// connection sets to the level's schema (Open), as for every other
// statement; a SET search_path clause on the function would cost a
// change of setting each way on every call.
//
// outcome: 0 the money moved (and the key, if any, is completed); 1 the key
// is not this owner's in_progress claim, nothing moved; 2 the payer does
// not exist, 3 its balance (payer_balance) is too low, 4 the payee does
// not exist: nothing moved and nothing was completed.
//
// Since migration 3 this build calls ledgerTransfer3DDL's function, which
// has the same outcomes; this one stays for servers of the build before.
const ledgerTransferDDL = `CREATE FUNCTION ledger_transfer(
		p_from TEXT, p_to TEXT, p_amount BIGINT, p_at BIGINT, p_customer TEXT, p_key TEXT,
		c_loose BOOLEAN, c_scope TEXT, c_key TEXT, c_owner TEXT,
		c_status INTEGER, c_headers TEXT, c_parts TEXT[], c_holes INTEGER[],
		OUT outcome INTEGER, OUT payer_balance BIGINT, OUT new_id BIGINT)
	LANGUAGE plpgsql
	AS $$
	DECLARE
		acct RECORD;
		payer_found BOOLEAN := false;
		payee_found BOOLEAN := false;
		tid TEXT;
		resp TEXT;
	BEGIN
		IF c_owner IS NOT NULL THEN
			IF c_loose THEN
				PERFORM 1 FROM idem_keys_unconstrained k WHERE k.scope = c_scope AND k.idem_key = c_key AND k.owner = c_owner AND k.state = 'in_progress' FOR UPDATE;
			ELSE
				PERFORM 1 FROM idem_keys k WHERE k.scope = c_scope AND k.idem_key = c_key AND k.owner = c_owner AND k.state = 'in_progress' FOR UPDATE;
			END IF;
			IF NOT FOUND THEN
				outcome := 1;
				RETURN;
			END IF;
		END IF;
		FOR acct IN SELECT a.id, a.balance FROM accounts a WHERE a.id IN (p_from, p_to) ORDER BY a.id FOR UPDATE LOOP
			IF acct.id = p_from THEN
				payer_found := true;
				payer_balance := acct.balance;
			END IF;
			IF acct.id = p_to THEN
				payee_found := true;
			END IF;
		END LOOP;
		IF NOT payer_found THEN
			outcome := 2;
			RETURN;
		ELSIF payer_balance < p_amount THEN
			outcome := 3;
			RETURN;
		ELSIF NOT payee_found THEN
			outcome := 4;
			RETURN;
		END IF;
		-- Both rows are locked already: one UPDATE debits and credits
		-- (a transfer to oneself moves nothing).
		IF p_from <> p_to THEN
			UPDATE accounts a SET balance = a.balance + CASE WHEN a.id = p_from THEN -p_amount ELSE p_amount END
				WHERE a.id IN (p_from, p_to);
		END IF;
		INSERT INTO transfers (from_id, to_id, amount, created_at, customer, idem_key)
			VALUES (p_from, p_to, p_amount, p_at, p_customer, p_key)
			RETURNING id INTO new_id;
		payer_balance := payer_balance - p_amount;
		outcome := 0;
		IF c_owner IS NULL THEN
			RETURN;
		END IF;
		tid := 'tr_' || CASE WHEN new_id < 1000000 THEN lpad(new_id::text, 6, '0') ELSE new_id::text END;
		resp := c_parts[1];
		FOR i IN 1 .. coalesce(array_length(c_holes, 1), 0) LOOP
			resp := resp || CASE c_holes[i] WHEN 1 THEN tid ELSE payer_balance::text END || c_parts[i + 1];
		END LOOP;
		IF c_loose THEN
			UPDATE idem_keys_unconstrained k SET state = 'completed', lease_until = 0, status = c_status, headers = c_headers, body = convert_to(resp, 'UTF8'), transfer_id = tid
				WHERE k.scope = c_scope AND k.idem_key = c_key AND k.owner = c_owner AND k.state = 'in_progress';
		ELSE
			UPDATE idem_keys k SET state = 'completed', lease_until = 0, status = c_status, headers = c_headers, body = convert_to(resp, 'UTF8'), transfer_id = tid
				WHERE k.scope = c_scope AND k.idem_key = c_key AND k.owner = c_owner AND k.state = 'in_progress';
		END IF;
		IF NOT FOUND THEN
			-- The key was locked above: this cannot happen, and if it ever
			-- did, the exception undoes the payment with the statement.
			RAISE EXCEPTION 'ledger_transfer: key % is not this owner''s to complete', c_key;
		END IF;
	END
	$$`

// ledgerTransfer3DDL is migration 3's ledger_transfer: the same locks in
// the same order, the same checks and outcomes, for less of the cluster's
// work per call. Most of a statement's cost inside the function is
// starting its plan, so a transfer that goes through runs five statements
// that PostgreSQL starts cheaply, each by a primary key: lock the key, move
// the money by two UPDATEs (the lower id first; the debit's WHERE checks
// the funds), record the transfer, complete the key. Migration 2 also ran
// five, but two of them (a cursor over both accounts, an UPDATE of both)
// are plans that start a sort and a bitmap scan. A transfer that does not go
// through is undone and decided as migration 2 decided it, on both rows
// locked in id order. The stored answer comes as one text, c_body, with a
// control character where each value goes (1 the transfer's id, 2 the
// payer's balance; see responseTemplate.marked), filled in by the
// completing UPDATE itself rather than by a loop of assignments. Measured
// in docs/PERFORMANCE.md ("The ledger function, cheaper to start").
//
// It has one argument fewer than migration 2's function, which stays, so
// that a server of the previous build still running during an upgrade
// keeps calling what it knows.
const ledgerTransfer3DDL = `CREATE FUNCTION ledger_transfer(
		p_from TEXT, p_to TEXT, p_amount BIGINT, p_at BIGINT, p_customer TEXT, p_key TEXT,
		c_loose BOOLEAN, c_scope TEXT, c_key TEXT, c_owner TEXT,
		c_status INTEGER, c_headers TEXT, c_body TEXT,
		OUT outcome INTEGER, OUT payer_balance BIGINT, OUT new_id BIGINT)
	LANGUAGE plpgsql
	AS $$
	DECLARE
		payer_found BOOLEAN := false;
		payee_found BOOLEAN := false;
		tid TEXT;
	BEGIN
		IF c_owner IS NOT NULL THEN
			IF c_loose THEN
				PERFORM 1 FROM idem_keys_unconstrained k WHERE k.scope = c_scope AND k.idem_key = c_key AND k.owner = c_owner AND k.state = 'in_progress' FOR UPDATE;
			ELSE
				PERFORM 1 FROM idem_keys k WHERE k.scope = c_scope AND k.idem_key = c_key AND k.owner = c_owner AND k.state = 'in_progress' FOR UPDATE;
			END IF;
			IF NOT FOUND THEN
				outcome := 1;
				RETURN;
			END IF;
		END IF;
		-- The money moves by two UPDATEs by primary key, the lower id
		-- first; the debit's own WHERE checks the funds, on the row as it
		-- is once locked (at READ COMMITTED an UPDATE that waited for
		-- another transaction tests its WHERE again on the row that
		-- transaction left).
		IF p_from < p_to THEN
			UPDATE accounts a SET balance = a.balance - p_amount WHERE a.id = p_from AND a.balance >= p_amount
				RETURNING a.balance INTO payer_balance;
			payer_found := FOUND;
			IF payer_found THEN
				UPDATE accounts a SET balance = a.balance + p_amount WHERE a.id = p_to;
				payee_found := FOUND;
			END IF;
		ELSIF p_from > p_to THEN
			UPDATE accounts a SET balance = a.balance + p_amount WHERE a.id = p_to;
			payee_found := FOUND;
			IF payee_found THEN
				UPDATE accounts a SET balance = a.balance - p_amount WHERE a.id = p_from AND a.balance >= p_amount
					RETURNING a.balance INTO payer_balance;
				payer_found := FOUND;
			END IF;
		END IF;
		IF p_from = p_to OR NOT (payer_found AND payee_found) THEN
			-- A transfer to oneself, or one that did not go through: undo
			-- what moved, then lock both rows in id order and decide on
			-- what they hold (the money may have come meanwhile).
			IF payer_found THEN
				UPDATE accounts a SET balance = a.balance + p_amount WHERE a.id = p_from;
			ELSIF payee_found THEN
				UPDATE accounts a SET balance = a.balance - p_amount WHERE a.id = p_to;
			END IF;
			IF p_from <= p_to THEN
				SELECT a.balance INTO payer_balance FROM accounts a WHERE a.id = p_from FOR UPDATE;
				payer_found := FOUND;
				PERFORM 1 FROM accounts a WHERE a.id = p_to FOR UPDATE;
				payee_found := FOUND;
			ELSE
				PERFORM 1 FROM accounts a WHERE a.id = p_to FOR UPDATE;
				payee_found := FOUND;
				SELECT a.balance INTO payer_balance FROM accounts a WHERE a.id = p_from FOR UPDATE;
				payer_found := FOUND;
			END IF;
			IF NOT payer_found THEN
				outcome := 2;
				RETURN;
			ELSIF payer_balance < p_amount THEN
				outcome := 3;
				RETURN;
			ELSIF NOT payee_found THEN
				outcome := 4;
				RETURN;
			END IF;
			IF p_from <> p_to THEN
				UPDATE accounts a SET balance = a.balance - p_amount WHERE a.id = p_from;
				UPDATE accounts a SET balance = a.balance + p_amount WHERE a.id = p_to;
			END IF;
			payer_balance := payer_balance - p_amount;
		END IF;
		INSERT INTO transfers (from_id, to_id, amount, created_at, customer, idem_key)
			VALUES (p_from, p_to, p_amount, p_at, p_customer, p_key)
			RETURNING id INTO new_id;
		outcome := 0;
		IF c_owner IS NULL THEN
			RETURN;
		END IF;
		tid := 'tr_' || CASE WHEN new_id < 1000000 THEN lpad(new_id::text, 6, '0') ELSE new_id::text END;
		IF c_loose THEN
			UPDATE idem_keys_unconstrained k SET state = 'completed', lease_until = 0, status = c_status, headers = c_headers,
				body = convert_to(replace(replace(c_body, chr(1), tid), chr(2), payer_balance::text), 'UTF8'), transfer_id = tid
				WHERE k.scope = c_scope AND k.idem_key = c_key AND k.owner = c_owner AND k.state = 'in_progress';
		ELSE
			UPDATE idem_keys k SET state = 'completed', lease_until = 0, status = c_status, headers = c_headers,
				body = convert_to(replace(replace(c_body, chr(1), tid), chr(2), payer_balance::text), 'UTF8'), transfer_id = tid
				WHERE k.scope = c_scope AND k.idem_key = c_key AND k.owner = c_owner AND k.state = 'in_progress';
		END IF;
		IF NOT FOUND THEN
			-- The key was locked above: this cannot happen, and if it ever
			-- did, the exception undoes the payment with the statement.
			RAISE EXCEPTION 'ledger_transfer: key % is not this owner''s to complete', c_key;
		END IF;
	END
	$$`

// ledger_transfer's outcomes.
const (
	ledgerMoved = iota
	ledgerKeyLost
	ledgerUnknownPayer
	ledgerInsufficientFunds
	ledgerUnknownPayee
)

// Transfer runs the ledger transaction at READ COMMITTED. Usually that is
// one statement, ledger_transfer: one round trip and one commit, the
// accounts locked only while PostgreSQL runs it. When a key is to be
// completed with a response that cannot be rendered ahead
// (responseTemplate), or when ledger_transfer finds that the transfer is
// declined (the declined answer quotes what the locked rows said), the
// transaction runs in steps instead (transferInSteps): two round trips,
// with the response rendered between them. See the package comment for
// the locks.
func (db *DB) Transfer(ctx context.Context, a engine.TransferArgs) (engine.TransferResult, error) {
	c := a.Complete
	var tmpl *responseTemplate
	args := []any{a.From, a.To, a.Amount, a.At, a.Customer, a.Key, nil, nil, nil, nil, nil, nil, nil}
	if c != nil {
		if !db.utf8 {
			return db.transferInSteps(ctx, a)
		}
		if tmpl = newResponseTemplate(a); tmpl == nil {
			return db.transferInSteps(ctx, a)
		}
		args[6], args[7], args[8], args[9] = c.Table == engine.TableLoose, c.Scope, c.Key, c.Owner
		args[10], args[11], args[12] = tmpl.status, tmpl.headers, tmpl.marked()
	}
	res := engine.TransferResult{SQL: string(ledger)}
	var (
		r   ledgerReply
		err error
	)
	if c != nil {
		r, err = db.callLedger(ctx, pairOf(a.From, a.To), args)
	} else {
		r, err = db.ledgerOnce(ctx, args)
	}
	if err != nil {
		return res, err
	}
	outcome, balance, id := r.outcome, r.balance, r.id
	switch outcome {
	case ledgerKeyLost:
		// Another attempt took the claim over: this one must not pay.
		return res, nil
	case ledgerUnknownPayer, ledgerInsufficientFunds, ledgerUnknownPayee:
		if c != nil {
			// Nothing moved. The answer to store quotes the locked rows, so
			// the key is completed by a transaction that renders it
			// between its reads and its writes.
			steps, err := db.transferInSteps(ctx, a)
			steps.SQL = res.SQL + ";\n" + steps.SQL
			return steps, err
		}
		res.Outcome, res.Missing = engine.TransferUnknownAccount, a.From
		if outcome == ledgerInsufficientFunds {
			res.Outcome, res.Missing, res.Balance = engine.TransferInsufficientFunds, "", *balance
		} else if outcome == ledgerUnknownPayee {
			res.Missing = a.To
		}
		return res, nil
	case ledgerMoved:
		res.Transfer = engine.Transfer{ID: engine.TransferID(*id), From: a.From, To: a.To, Amount: a.Amount,
			BalanceAfter: *balance, CreatedAt: a.At, Customer: a.Customer, Key: a.Key}
		if c != nil {
			resp := tmpl.fill(*id, *balance)
			res.Completed, res.Response = true, &resp
		}
		return res, nil
	}
	return res, fmt.Errorf("postgres: transfer: ledger_transfer answered outcome %d", outcome)
}

// ledgerOnce runs one call of ledger_transfer on its own.
func (db *DB) ledgerOnce(ctx context.Context, args []any) (ledgerReply, error) {
	var r ledgerReply
	if err := db.pool.QueryRow(ctx, string(ledger), args...).Scan(&r.outcome, &r.balance, &r.id); err != nil {
		return r, mapErr("transfer", err)
	}
	return r, nil
}

// A responseTemplate is the response that completes a key when its
// transfer moves money, rendered by the engine before the ledger has
// drawn the transfer's id and read the payer's balance: its body is cut
// where those two go, for ledger_transfer to fill in.
type responseTemplate struct {
	status  int32
	headers string // the header list, as JSON (responseArgs)
	header  []engine.Header
	parts   []string // the body around the holes: one more than holes
	holes   []int32  // what goes in each hole: holeID or holeBalance
}

// What goes in a hole of a responseTemplate.
const (
	holeID      = 1 // the transfer's id, as engine.TransferID writes it
	holeBalance = 2 // the payer's balance after the transfer, in decimal
)

// Two made-up transfers that render each response twice: values that no
// real transfer has, so that where they appear in a rendering is where the
// real ones will go.
const (
	sampleID1, sampleBalance1 = 7391046285173, 8264019375146
	sampleID2, sampleBalance2 = 5172839406127, 6048271935902
)

// newResponseTemplate renders a's completion for a transfer that moves
// money, or returns nil when that response cannot be rendered ahead: when
// the two sample renderings differ anywhere but in the holes (the status,
// the headers, or a value written some other way), or when the body is no
// text PostgreSQL can carry with its holes marked (not UTF-8, or holding
// a NUL or either mark; see marked).
func newResponseTemplate(a engine.TransferArgs) *responseTemplate {
	render := func(id, balance int64) engine.Response {
		return a.Complete.Render(engine.TransferResult{Outcome: engine.TransferDone, Transfer: engine.Transfer{
			ID: engine.TransferID(id), From: a.From, To: a.To, Amount: a.Amount, BalanceAfter: balance,
			CreatedAt: a.At, Customer: a.Customer, Key: a.Key}})
	}
	one, two := render(sampleID1, sampleBalance1), render(sampleID2, sampleBalance2)
	if one.Status != two.Status || !utf8.Valid(one.Body) || strings.ContainsAny(string(one.Body), "\x00\x01\x02") {
		return nil
	}
	h1, err1 := json.Marshal(one.Header)
	h2, err2 := json.Marshal(two.Header)
	if err1 != nil || err2 != nil || string(h1) != string(h2) {
		return nil
	}
	t := &responseTemplate{status: int32(one.Status), headers: string(h1), header: one.Header}
	idText, balanceText := engine.TransferID(sampleID1), strconv.FormatInt(sampleBalance1, 10)
	body, start := string(one.Body), 0
	for i := 0; i < len(body); {
		switch {
		case strings.HasPrefix(body[i:], idText):
			t.parts, t.holes = append(t.parts, body[start:i]), append(t.holes, holeID)
			i += len(idText)
		case strings.HasPrefix(body[i:], balanceText):
			t.parts, t.holes = append(t.parts, body[start:i]), append(t.holes, holeBalance)
			i += len(balanceText)
		default:
			i++
			continue
		}
		start = i
	}
	t.parts = append(t.parts, body[start:])
	if got := t.fill(sampleID2, sampleBalance2); string(got.Body) != string(two.Body) {
		return nil
	}
	return t
}

// marked is the body as ledger_transfer takes it: the parts, with the
// character chr(hole) in each hole. newResponseTemplate refuses a body
// that holds either character itself.
func (t *responseTemplate) marked() string {
	var b strings.Builder
	b.WriteString(t.parts[0])
	for i, h := range t.holes {
		b.WriteByte(byte(h))
		b.WriteString(t.parts[i+1])
	}
	return b.String()
}

// fill is the response with the transfer's id and the payer's balance in
// the holes: byte for byte what ledger_transfer stores.
func (t *responseTemplate) fill(id, balance int64) engine.Response {
	idText, balanceText := engine.TransferID(id), strconv.FormatInt(balance, 10)
	var b strings.Builder
	b.WriteString(t.parts[0])
	for i, h := range t.holes {
		if h == holeID {
			b.WriteString(idText)
		} else {
			b.WriteString(balanceText)
		}
		b.WriteString(t.parts[i+1])
	}
	body := []byte(b.String())
	return engine.Response{Status: int(t.status), Header: t.header, Body: body}
}
