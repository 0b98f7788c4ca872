package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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
}

func newLabBridge() *labBridge { return &labBridge{dbs: map[string]*labdb.DB{}} }

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
		dec := json.NewDecoder(bytes.NewReader([]byte(paramsJSON)))
		dec.UseNumber()
		if err := dec.Decode(&params); err != nil {
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
		switch op {
		case "get":
			if res.Row == nil {
				return `{"ok":{}` + tx
			}
			return `{"ok":` + encode(map[string]any{"row": res.Row}) + tx
		case "all":
			return `{"ok":` + encode(map[string]any{"rows": res.Rows}) + tx
		case "run":
			return `{"ok":{"changes":` + strconv.FormatInt(res.Changes, 10) + `,"lastInsertRowid":` + strconv.FormatInt(res.LastInsertRowid, 10) + `}` + tx
		}
		return `{"ok":{}` + tx
	})
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

func (lb *labBridge) reset(id string) string {
	return lb.with(id, func(d *labdb.DB) string {
		if err := d.Reset(); err != nil {
			return labFail(err)
		}
		return `{}`
	})
}

// payArgs is what the handler passes to pay, with the attempt's own
// customer and key added by the runner.
type payArgs struct {
	Attempt    string  `json:"attempt"`
	Customer   string  `json:"customer"`
	RequestKey string  `json:"request_key"`
	From       string  `json:"from"`
	To         string  `json:"to"`
	Amount     float64 `json:"amount"`
	Key        *string `json:"key"`
}

// pay is the payment network's call: {"ok":{charge_id, amount, replayed}}.
func (lb *labBridge) pay(id, argsJSON string) string {
	var a payArgs
	if err := json.Unmarshal([]byte(argsJSON), &a); err != nil {
		return labFail(&labdb.Error{Name: "PaymentError", Message: "pay({from, to, amount, key}): " + err.Error()})
	}
	if a.Amount != float64(int64(a.Amount)) {
		return labFail(&labdb.Error{Name: "PaymentError", Message: "the amount must be a whole number of won"})
	}
	key := ""
	if a.Key != nil {
		key = *a.Key
	}
	return lb.with(id, func(d *labdb.DB) string {
		ch, replayed, err := d.Pay(a.Attempt, a.Customer, a.RequestKey, a.From, a.To, int64(a.Amount), key)
		if err != nil {
			return labFail(err)
		}
		return encode(map[string]any{"ok": map[string]any{"charge_id": ch.ID, "amount": ch.Amount, "replayed": replayed}})
	})
}

// dump reads every table after a step, for the bench's database row, and
// the network's charges.
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
// {ok, broken} unless the run broke a rule.
type judgeRequest struct {
	Intents          []lab.Intent         `json:"intents"`
	Attempts         []lab.HandlerAttempt `json:"attempts"`
	RetentionSeconds *float64             `json:"retention_seconds"`
	Brief            bool                 `json:"brief"`
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
		if !req.Brief || !rep.OK {
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
	run := lab.HandlerRun{Intents: req.Intents, Attempts: req.Attempts, RetentionSeconds: req.RetentionSeconds,
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
	return run, nil
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
