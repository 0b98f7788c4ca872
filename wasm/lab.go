package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"idemlab/lab"
	"idemlab/store/sqlite/labdb"
)

// MaxLabDBs bounds the lab databases one page keeps open.
const MaxLabDBs = 16

// labBridge holds the lab's databases (docs/lab-handler.md): the runner
// worker of the browser's lab opens one per handler and calls it one step
// at a time. Its functions answer at once (JSON strings, no Promise): a
// step of a student's handler is one SQLite statement, and the explorer
// runs thousands a second, so a goroutine and a Promise per call would
// be most of its cost. It is safe for concurrent use.
type labBridge struct {
	mu  sync.Mutex
	dbs map[string]*labdb.DB
	seq int
	// scenarios holds each database's scenario for verdict, and verdicts
	// the brief verdicts already reached, by what they judged.
	scenarios map[string]judgeRequest
	verdicts  map[string]string
}

func newLabBridge() *labBridge {
	return &labBridge{dbs: map[string]*labdb.DB{}, scenarios: map[string]judgeRequest{}, verdicts: map[string]string{}}
}

// maxVerdicts bounds the kept verdicts.
const maxVerdicts = 20000

// labFail is how a lab call that failed answers: {"err":{name,code,message}},
// the shape the handler's rejected Promise carries.
func labFail(err error) string {
	var e *labdb.Error
	if !errors.As(err, &e) {
		e = &labdb.Error{Name: "LabError", Message: err.Error()}
	}
	return encode(map[string]any{"err": e})
}

func (lb *labBridge) db(id string) (*labdb.DB, error) {
	d, ok := lb.dbs[id]
	if !ok {
		return nil, fmt.Errorf("no open lab database %q", id)
	}
	return d, nil
}

// open creates a lab database from the student's schema and the accounts
// ([{id, balance}]): {"db","tables"}.
func (lb *labBridge) open(schema, accountsJSON string) string {
	var accounts []labdb.Account
	if err := json.Unmarshal([]byte(accountsJSON), &accounts); err != nil {
		return labFail(fmt.Errorf("accounts: %w", err))
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if len(lb.dbs) >= MaxLabDBs {
		return labFail(fmt.Errorf("too many open lab databases (%d)", MaxLabDBs))
	}
	d, err := labdb.Open(schema, accounts)
	if err != nil {
		return labFail(err)
	}
	lb.seq++
	id := "d" + strconv.Itoa(lb.seq)
	lb.dbs[id] = d
	return encode(map[string]any{"db": id, "tables": d.Tables()})
}

func (lb *labBridge) with(id string, f func(*labdb.DB) string) string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	d, err := lb.db(id)
	if err != nil {
		return labFail(err)
	}
	return f(d)
}

func (lb *labBridge) conn(id, attempt string) string {
	return lb.with(id, func(d *labdb.DB) string {
		c, err := d.Conn(attempt)
		if err != nil {
			return labFail(err)
		}
		return `{"conn":` + strconv.Quote(c) + `}`
	})
}

// exec runs one db call: {"ok": result} or {"err": …}; a Busy err means
// the attempt waits for the write lock.
func (lb *labBridge) exec(id, conn, op, sql, paramsJSON string) string {
	var params []any
	if paramsJSON != "" && paramsJSON != "[]" {
		var err error
		if params, err = parseFlat(paramsJSON); err != nil {
			return labFail(&labdb.Error{Name: "SQLError", Message: "parameters: " + err.Error()})
		}
	}
	return lb.with(id, func(d *labdb.DB) string {
		res, err := d.Exec(conn, op, sql, params)
		// tx says whether the connection holds a transaction after the
		// call: the runner's scheduler knows who holds the write lock.
		tx := `,"tx":` + strconv.FormatBool(d.InTx(conn)) + `}`
		if err != nil {
			out := labFail(err)
			return out[:len(out)-1] + tx
		}
		// What a get or an all given a statement that writes changed
		// (INSERT … RETURNING): the page draws the row it wrote.
		wrote := ""
		if op != "run" && res.Changes > 0 {
			wrote = `,"changes":` + strconv.FormatInt(res.Changes, 10) + `,"lastInsertRowid":` + strconv.FormatInt(res.LastInsertRowid, 10)
		}
		switch op {
		case "get":
			if res.Row == nil {
				return `{"ok":{` + strings.TrimPrefix(wrote, ",") + `}` + tx
			}
			return `{"ok":{"row":` + string(appendRow(nil, res.Row)) + wrote + `}` + tx
		case "all":
			b := []byte(`{"ok":{"rows":[`)
			for i, r := range res.Rows {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendRow(b, r)
			}
			return string(b) + `]` + wrote + `}` + tx
		case "run":
			dropped := ""
			if res.Dropped {
				dropped = `,"dropped":true`
			}
			return `{"ok":{"changes":` + strconv.FormatInt(res.Changes, 10) + `,"lastInsertRowid":` + strconv.FormatInt(res.LastInsertRowid, 10) + dropped + `}` + tx
		}
		return `{"ok":{}` + tx
	})
}

// step is exec with its arguments in one string (splitStep): the
// explorer's commonest call.
func (lb *labBridge) step(arg string) string {
	db, conn, op, params, sql, ok := splitStep(arg)
	if !ok {
		return labFail(fmt.Errorf("labStep: want db, conn, op, params and sql, each ended by a newline but the last"))
	}
	return lb.exec(db, conn, op, sql, params)
}

// release ends an attempt's connection (its answer, exception or crash):
// an open transaction rolls back.
func (lb *labBridge) release(id, conn string) string {
	return lb.with(id, func(d *labdb.DB) string {
		rolled, err := d.Release(conn)
		if err != nil {
			return labFail(err)
		}
		return `{"rolled_back":` + strconv.FormatBool(rolled) + `}`
	})
}

// reset restores the database as it was after open and opens a
// connection for each of the attempts (a JSON array of their ids):
// {"conns": {attempt: conn}}. One call per schedule of the explorer.
func (lb *labBridge) reset(id, attemptsJSON string) string {
	var attempts []string
	if attemptsJSON != "" {
		ids, err := parseFlat(attemptsJSON)
		if err != nil {
			return labFail(fmt.Errorf("reset: attempts: %w", err))
		}
		for _, id := range ids {
			s, _ := id.(string)
			attempts = append(attempts, s)
		}
	}
	return lb.with(id, func(d *labdb.DB) string {
		if err := d.Reset(); err != nil {
			return labFail(err)
		}
		b := []byte(`{"conns":{`)
		for i, a := range attempts {
			c, err := d.Conn(a)
			if err != nil {
				return labFail(err)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, a)
			b = append(b, ':')
			b = appendJSONString(b, c)
		}
		return string(append(b, "}}"...))
	})
}

// pay is the payment network's call: args is the flat JSON array
// [attempt, customer, request key, from, to, amount, network key or null]
// (the runner adds the attempt's own customer and key to what the handler
// passed). It answers {"ok":{charge_id, amount, replayed}}.
func (lb *labBridge) pay(id, args string) string {
	a, err := parseFlat(args)
	if err != nil || len(a) != 7 {
		return labFail(&labdb.Error{Name: "PaymentError", Message: "pay({from, to, amount, key}): bad arguments"})
	}
	str := func(v any) string { s, _ := v.(string); return s }
	var amount int64
	switch n := a[5].(type) {
	case int64:
		amount = n
	default:
		return labFail(&labdb.Error{Name: "PaymentError", Message: "the amount must be a whole number of won"})
	}
	return lb.with(id, func(d *labdb.DB) string {
		ch, replayed, err := d.Pay(str(a[0]), str(a[1]), str(a[2]), str(a[3]), str(a[4]), amount, str(a[6]))
		if err != nil {
			return labFail(err)
		}
		b := append([]byte(`{"ok":{"charge_id":`), appendJSONString(nil, ch.ID)...)
		b = append(b, `,"amount":`...)
		b = strconv.AppendInt(b, ch.Amount, 10)
		b = append(b, `,"replayed":`...)
		b = strconv.AppendBool(b, replayed)
		return string(append(b, "}}"...))
	})
}

// dump reads every table after a step, for the bench's database row, and
// the network's charges.
// setBalance is the lab's own write of an account's balance between a
// scenario's attempts (labdb.SetBalance): {"ok":true} or the error.
func (lb *labBridge) setBalance(id, account, balance string) string {
	n, err := strconv.ParseInt(balance, 10, 64)
	if err != nil {
		return labFail(fmt.Errorf("setBalance: the balance must be a whole number of won: %q", balance))
	}
	return lb.with(id, func(d *labdb.DB) string {
		if err := d.SetBalance(account, n); err != nil {
			return labFail(err)
		}
		return `{"ok":true}`
	})
}

func (lb *labBridge) dump(id string) string {
	return lb.with(id, func(d *labdb.DB) string {
		tables, err := d.Dump()
		if err != nil {
			return labFail(err)
		}
		return encode(map[string]any{"tables": tables, "charges": d.Charges()})
	})
}

// judgeRequest is what the runner sends to judge a run: the attempts and
// intents (the lab reads the rest from its own tables), and brief: only
// {ok, broken} (the explorer judges every schedule briefly, and replays
// the one it keeps for the full report).
type judgeRequest struct {
	Intents          []lab.Intent          `json:"intents"`
	Attempts         []lab.HandlerAttempt  `json:"attempts"`
	RetentionSeconds *float64              `json:"retention_seconds"`
	Purges           []lab.HandlerPurge    `json:"purges"`
	Claims           []string              `json:"claims"`
	Takeovers        []lab.HandlerTakeover `json:"takeovers"`
	KeysRead         bool                  `json:"keys_read"`
	KeysScoped       bool                  `json:"keys_scoped"`
	Brief            bool                  `json:"brief"`
	// Scenario is the scenario's name, which the diagnosis reads.
	Scenario string `json:"scenario"`
}

// judge judges the run that just happened on the database by the
// checker's rules (lab.JudgeHandlerRun): {"ok","broken","report"}.
func (lb *labBridge) judge(id, runJSON string) string {
	var req judgeRequest
	if err := json.Unmarshal([]byte(runJSON), &req); err != nil {
		return labFail(fmt.Errorf("judge: %w", err))
	}
	return lb.with(id, func(d *labdb.DB) string {
		run, err := handlerRun(d, req)
		if err != nil {
			return labFail(err)
		}
		rep := lab.JudgeHandlerRun(run)
		out := map[string]any{"ok": rep.OK, "broken": rep.Broken()}
		if len(rep.Notes) > 0 {
			out["notes"] = len(rep.Notes)
		}
		if !req.Brief {
			out["report"] = rep
			out["transfers"] = run.Transfers
			out["charges"] = run.Charges
			out["end_balances"] = run.EndBalances
		}
		return encode(out)
	})
}

func handlerRun(d *labdb.DB, req judgeRequest) (lab.HandlerRun, error) {
	accounts, transfers, err := d.Ledger()
	if err != nil {
		return lab.HandlerRun{}, err
	}
	run := lab.HandlerRun{Intents: req.Intents, Attempts: req.Attempts, RetentionSeconds: req.RetentionSeconds, Scenario: req.Scenario, Purges: req.Purges,
		Claims: req.Claims, Takeovers: req.Takeovers, KeysRead: req.KeysRead, KeysScoped: req.KeysRead && req.KeysScoped,
		StartBalances: d.StartBalances(), EndBalances: map[string]int64{},
		Transfers: make([]lab.HandlerTransfer, 0, len(transfers)), Charges: []lab.HandlerCharge{}}
	for _, a := range accounts {
		run.EndBalances[a.ID] = a.Balance
	}
	for _, t := range transfers {
		run.Transfers = append(run.Transfers, lab.HandlerTransfer{ID: t.ID, From: t.From, To: t.To, Amount: t.Amount, Attempt: t.Attempt})
	}
	for _, c := range d.Charges() {
		run.Charges = append(run.Charges, lab.HandlerCharge{ID: c.ID, Attempt: c.Attempt, Amount: c.Amount, NetworkKey: c.NetworkKey})
	}
	// The network's calls as the database saw them, not as the page says.
	for i := range run.Attempts {
		run.Attempts[i].Pays = nil
	}
	withPays(&run, d.PayCalls())
	for _, g := range d.IgnoredInserts() {
		run.Ignored = append(run.Ignored, lab.HandlerIgnored{Attempt: g.Attempt, Table: g.Table, SQL: g.SQL})
	}
	run.TakenLive, run.TakenEnded = taken(d.Takeovers()), taken(d.EndedTakeovers())
	run.NothingUnique = d.NothingUnique()
	return run, nil
}

// taken is the database's record of rows taken over (from running
// attempts, or from ended ones), in the checker's terms.
func taken(ts []labdb.Takeover) []lab.HandlerTakenLive {
	var out []lab.HandlerTakenLive
	for _, t := range ts {
		out = append(out, lab.HandlerTakenLive{Attempt: t.Attempt, From: t.From, Table: t.Table})
	}
	return out
}

func (lb *labBridge) close(id string) string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	d, err := lb.db(id)
	if err != nil {
		return labFail(err)
	}
	d.Close()
	delete(lb.dbs, id)
	return `{"closed":true}`
}

func (lb *labBridge) closeAll() {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for id, d := range lb.dbs {
		d.Close()
		delete(lb.dbs, id)
	}
}

// helper runs one of the handler's lab.* helpers (lab.HandlerHelper):
// {"ok": value}.
func (lb *labBridge) helper(name, arg string) string {
	v, ok := lab.HandlerHelper(name, arg)
	if !ok {
		return labFail(fmt.Errorf("no such helper: lab.%s", name))
	}
	return encode(map[string]any{"ok": v})
}

// appendRow writes a row as a JSON object: what encoding/json would
// write for it, without its reflection, which the explorer would pay for
// at every step.
func appendRow(b []byte, row map[string]any) []byte {
	b = append(b, '{')
	first := true
	for k, v := range row {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, k)
		b = append(b, ':')
		switch x := v.(type) {
		case nil:
			b = append(b, "null"...)
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case string:
			b = appendJSONString(b, x)
		default:
			e, err := json.Marshal(x)
			if err != nil {
				e = []byte("null")
			}
			b = append(b, e...)
		}
	}
	return append(b, '}')
}

// appendJSONString writes s as a JSON string: printable ASCII as Go
// quotes it (the same as JSON's), anything else as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			e, _ := json.Marshal(s)
			return append(b, e...)
		}
	}
	return strconv.AppendQuote(b, s)
}

// scenario sets the scenario that verdict judges on a database: its
// intents, its attempts (id, intent, customer, key, body, now; their
// answers come with each verdict) and the published retention.
func (lb *labBridge) scenario(id, scenarioJSON string) string {
	var req judgeRequest
	if err := json.Unmarshal([]byte(scenarioJSON), &req); err != nil {
		return labFail(fmt.Errorf("scenario: %w", err))
	}
	return lb.with(id, func(*labdb.DB) string {
		lb.scenarios[id] = req
		// A verdict is the scenario's: the same answers and ledger judge
		// otherwise when the attempts are other intents or customers
		// (two customers' transfers, not one paid twice).
		clear(lb.verdicts)
		return `{}`
	})
}

// verdict judges the schedule that just ran on the database, briefly:
// {"ok","broken"}. answers is the flat JSON array of the attempts'
// answers, in the order they reached the server, each
// [id, answered, delivered, status, response, headers-replayed, arrived,
// answered_at, slips, content-type, retry-after] with 0/1 for the flags
// (all from arrived on may be left out, and each of the last three). The explorer calls it once per schedule; schedules
// that end alike (the same answers, the same ledger and charges) are
// judged once.
func (lb *labBridge) verdict(id, answers string) string {
	return lb.with(id, func(d *labdb.DB) string {
		sc, ok := lb.scenarios[id]
		if !ok {
			return labFail(errors.New("verdict: no scenario set"))
		}
		accounts, transfers, err := d.Ledger()
		if err != nil {
			return labFail(err)
		}
		charges := d.Charges()
		calls := d.PayCalls()
		live, ended := d.Takeovers(), d.EndedTakeovers()
		key := ledgerKey(id, answers, accounts, transfers, charges, calls, live, ended)
		if v, ok := lb.verdicts[key]; ok {
			return v
		}
		rows, err := parseFlat(answers)
		if err != nil {
			return labFail(fmt.Errorf("verdict: %w", err))
		}
		statics := make(map[string]lab.HandlerAttempt, len(sc.Attempts))
		for _, a := range sc.Attempts {
			statics[a.ID] = a
		}
		run := lab.HandlerRun{Intents: sc.Intents, RetentionSeconds: sc.RetentionSeconds, Scenario: sc.Scenario, StartBalances: d.StartBalances(),
			EndBalances: map[string]int64{}, Transfers: make([]lab.HandlerTransfer, 0, len(transfers)), Charges: make([]lab.HandlerCharge, 0, len(charges))}
		for _, r := range rows {
			f, _ := r.([]any)
			if len(f) != 6 && len(f) != 8 && len(f) != 9 && len(f) != 10 && len(f) != 11 {
				return labFail(errors.New("verdict: an answer is [id, answered, delivered, status, response, replayed, arrived?, answered_at?, slips?, content_type?, retry_after?]"))
			}
			aid, _ := f[0].(string)
			a := statics[aid]
			if len(f) >= 8 {
				a.Arrived, _ = f[6].(int64)
				a.AnsweredAt, _ = f[7].(int64)
			}
			if len(f) >= 9 {
				withSlips(&a, f[8])
			}
			a.Answered, a.Delivered = f[1] == int64(1), f[2] == int64(1)
			if st, ok := f[3].(int64); ok {
				a.Status = int(st)
			}
			a.Response, _ = f[4].(string)
			a.Headers = map[string]string{}
			if f[5] == int64(1) {
				a.Headers["Idempotent-Replayed"] = "true"
			}
			if len(f) >= 10 {
				if ct, _ := f[9].(string); ct != "" {
					a.Headers["Content-Type"] = ct
				}
			}
			if len(f) == 11 {
				if ra, _ := f[10].(string); ra != "" {
					a.Headers["Retry-After"] = ra
				}
			}
			run.Attempts = append(run.Attempts, a)
		}
		for _, a := range accounts {
			run.EndBalances[a.ID] = a.Balance
		}
		for _, t := range transfers {
			run.Transfers = append(run.Transfers, lab.HandlerTransfer{ID: t.ID, From: t.From, To: t.To, Amount: t.Amount, Attempt: t.Attempt})
		}
		for _, c := range charges {
			run.Charges = append(run.Charges, lab.HandlerCharge{ID: c.ID, Attempt: c.Attempt, Amount: c.Amount, NetworkKey: c.NetworkKey})
		}
		withPays(&run, calls)
		run.TakenLive, run.TakenEnded = taken(live), taken(ended)
		run.NothingUnique = d.NothingUnique()
		rep := lab.JudgeHandlerRun(run)
		b := []byte(`{"ok":`)
		b = strconv.AppendBool(b, rep.OK)
		b = append(b, `,"broken":[`...)
		for i, n := range rep.Broken() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, n)
		}
		b = append(b, ']')
		// How many answers the contract does not give (lab.Note): the
		// explorer replays such a run for the notes' words.
		if len(rep.Notes) > 0 {
			b = append(b, `,"notes":`...)
			b = strconv.AppendInt(b, int64(len(rep.Notes)), 10)
		}
		out := string(append(b, '}'))
		if len(lb.verdicts) >= maxVerdicts {
			clear(lb.verdicts)
		}
		lb.verdicts[key] = out
		return out
	})
}

// withSlips sets an attempt's slips from a brief answer's flags (1 a call
// never awaited that never ran, 2 an answer with its transaction open, 4
// a SELECT given to db.run, 8 a call to pay with its transaction open, 16
// a call to pay the scenario's network failed, 32 a call that ran with
// nothing awaiting it, 64 one that failed so, 128 a refusal built and
// not returned, 256 an UPDATE or DELETE with no WHERE, 512 a write given
// to db.get or db.all without RETURNING): a brief verdict counts the
// notes they make; their words
// come from the full verdict of the run replayed.
func withSlips(a *lab.HandlerAttempt, flags any) {
	n, _ := flags.(int64)
	if n&1 != 0 {
		a.Unawaited = []lab.HandlerCall{{Op: "run"}}
	}
	if n&32 != 0 {
		a.Unawaited = append(a.Unawaited, lab.HandlerCall{Op: "pay", Ran: true})
	}
	if n&64 != 0 {
		a.Unawaited = append(a.Unawaited, lab.HandlerCall{Op: "run", Ran: true, Failed: "Error"})
	}
	if n&128 != 0 {
		a.Unreturned = []lab.HandlerCall{{Op: "problem"}}
	}
	a.LeftOpen = n&2 != 0
	if n&4 != 0 {
		a.Dropped = []lab.HandlerCall{{Op: "run"}}
	}
	if n&8 != 0 {
		a.PaidInTx = []lab.HandlerCall{{Op: "pay"}}
	}
	if n&256 != 0 {
		a.Unscoped = []lab.HandlerCall{{Op: "run"}}
	}
	if n&512 != 0 {
		a.WriteRead = []lab.HandlerCall{{Op: "get"}}
	}
	// The scenario's network failure (set with the scenario) counts only
	// where the attempt called pay and met it.
	if n&16 == 0 {
		a.PayFault = ""
	}
}

// ledgerKey is everything a brief verdict depends on, as one string.
func ledgerKey(db, answers string, accounts []labdb.Account, transfers []labdb.Transfer, charges []labdb.Charge, calls []labdb.PayCall, live, ended []labdb.Takeover) string {
	b := make([]byte, 0, 256+len(answers))
	b = append(b, db...)
	b = append(b, 0)
	b = append(b, answers...)
	for _, a := range accounts {
		b = append(b, 0)
		b = append(b, a.ID...)
		b = append(b, '=')
		b = strconv.AppendInt(b, a.Balance, 10)
	}
	for _, t := range transfers {
		b = append(b, 1)
		b = strconv.AppendInt(b, t.ID, 10)
		b = append(b, ' ')
		b = append(b, t.From...)
		b = append(b, ' ')
		b = append(b, t.To...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, t.Amount, 10)
		b = append(b, ' ')
		b = append(b, t.Attempt...)
	}
	for _, c := range charges {
		b = append(b, 2)
		b = append(b, c.ID...)
		b = append(b, ' ')
		b = append(b, c.Attempt...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, c.Amount, 10)
		b = append(b, ' ')
		b = append(b, c.NetworkKey...)
	}
	for _, c := range calls {
		b = append(b, 3)
		b = append(b, c.Attempt...)
		b = append(b, ' ')
		b = append(b, c.NetworkKey...)
		b = append(b, ' ')
		b = append(b, c.Outcome...)
	}
	for i, ts := range [][]labdb.Takeover{live, ended} {
		for _, t := range ts {
			b = append(b, byte(4+i))
			b = append(b, t.Attempt...)
			b = append(b, ' ')
			b = append(b, t.From...)
			b = append(b, ' ')
			b = append(b, t.Table...)
		}
	}
	return string(b)
}

// withPays gives each attempt of the run its calls to the network, as the
// database recorded them (the checker's HandlerAttempt.Pays).
func withPays(run *lab.HandlerRun, calls []labdb.PayCall) {
	for _, c := range calls {
		for i := range run.Attempts {
			if a := &run.Attempts[i]; a.ID == c.Attempt {
				a.Pays = append(a.Pays, lab.HandlerPay{NetworkKey: c.NetworkKey, Outcome: c.Outcome, Charge: c.Charge})
			}
		}
	}
}

// splitStep reads labStep's one argument: db, conn, op and the
// parameters' JSON (none of which holds a newline), each followed by a
// newline, then the SQL, which may hold anything.
func splitStep(s string) (db, conn, op, params, sql string, ok bool) {
	var parts [4]string
	for i := range parts {
		j := strings.IndexByte(s, '\n')
		if j < 0 {
			return "", "", "", "", "", false
		}
		parts[i], s = s[:j], s[j+1:]
	}
	return parts[0], parts[1], parts[2], parts[3], s, true
}

// labDay is the lab's day of traffic (lab.NewLabDay) from a seed,
// starting at startMS: {"accounts","attempts"}.
func labDay(seed, startMS string) string {
	sd, err := strconv.ParseInt(seed, 10, 64)
	if err != nil {
		return labFail(fmt.Errorf("day: seed: %w", err))
	}
	at, err := strconv.ParseInt(startMS, 10, 64)
	if err != nil {
		return labFail(fmt.Errorf("day: start: %w", err))
	}
	return encode(lab.NewLabDay(sd, at))
}
