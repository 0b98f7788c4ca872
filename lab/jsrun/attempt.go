package jsrun

// attempt.go runs one POST /transfers: a runtime of its own, the handler's
// arguments, and the event loop that turns each db and pay call into a step.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
)

// maxCallStack stops runaway recursion long before Go's own stack would.
const maxCallStack = 4096

// attempt is one POST /transfers on its way through the handler. It is
// owned by the request's goroutine: the runtime, the connection and the
// queue are never touched by another.
type attempt struct {
	h    *Handler
	id   string
	vm   *goja.Runtime
	ctx  context.Context
	conn *sqlite3.Conn // nil until the first db call
	// queue holds the Go work of the db and pay calls made since the loop
	// last ran one, in call order.
	queue []func()
	// fatal is an uncatchable error a resolution ran into (the budget's
	// interrupt): the attempt ends with it.
	fatal error
}

// errBudget is the interrupt's value when an attempt runs past its budget.
var errBudget = errors.New("jsrun: time budget")

// errMemory is the interrupt's value when the heap grew past MaxHeap.
var errMemory = errors.New("jsrun: memory budget")

// heapEvery is how often a running attempt looks at the heap's size.
const heapEvery = 10 * time.Millisecond

// watchHeap stops vm when the process's heap holds more than limit bytes,
// until done is closed.
func watchHeap(vm *goja.Runtime, limit uint64, done <-chan struct{}) {
	t := time.NewTicker(heapEvery)
	defer t.Stop()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		select {
		case <-done:
			return
		case <-t.C:
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > limit {
				vm.Interrupt(errMemory)
				return
			}
		}
	}
}

// transfer runs the handler for one request and returns its answer, or a
// 500 problem that names the line where the handler threw.
func (h *Handler) transfer(r *http.Request, body []byte) (resp engine.Response) {
	n := h.attempts.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), h.opts.Budget)
	defer cancel()
	a := &attempt{h: h, id: "a" + strconv.FormatInt(n, 10) + "." + h.process, vm: goja.New(), ctx: ctx}
	a.vm.SetMaxCallStackSize(maxCallStack)
	// The interrupt stops JavaScript that never awaits (while (true) {});
	// the context stops a statement waiting for the lock and a payment.
	stop := time.AfterFunc(h.opts.Budget, func() { a.vm.Interrupt(errBudget) })
	defer stop.Stop()
	watching := make(chan struct{})
	defer close(watching)
	go watchHeap(a.vm, h.opts.MaxHeap, watching)
	defer func() {
		if a.conn != nil {
			h.release(a.conn)
		}
	}()
	defer func() {
		// A bug of the lab's own must not take the endpoint down with it.
		if p := recover(); p != nil {
			resp = h.internalError(a.id, fmt.Errorf("panic: %v", p))
		}
	}()
	resp, err := a.run(r, body)
	if err != nil {
		return a.threw(err)
	}
	return resp
}

// run loads the file into the attempt's runtime, calls transfer and loops
// until its Promise settles.
func (a *attempt) run(r *http.Request, body []byte) (engine.Response, error) {
	vm := a.vm
	installLab(vm, a.h, a.id)
	if _, err := vm.RunProgram(a.h.prog); err != nil {
		return engine.Response{}, err
	}
	decl, err := vm.RunProgram(declarations)
	if err != nil {
		return engine.Response{}, err
	}
	fn, ok := goja.AssertFunction(decl.ToObject(vm).Get("transfer"))
	if !ok {
		return engine.Response{}, errors.New("transfer is not a function")
	}
	v, err := fn(goja.Undefined(), a.request(r, body), a.db(), vm.ToValue(a.pay))
	if err != nil {
		return engine.Response{}, err
	}
	p, isPromise := export(v).(*goja.Promise)
	if !isPromise {
		return a.answer(v)
	}
	for p.State() == goja.PromiseStatePending {
		if a.fatal != nil {
			return engine.Response{}, a.fatal
		}
		if a.overBudget() {
			return engine.Response{}, errBudget
		}
		if len(a.queue) == 0 {
			return engine.Response{}, errors.New("transfer is waiting for a Promise that nothing will settle: await only db, pay and your own async functions")
		}
		step := a.queue[0]
		a.queue = a.queue[1:]
		// Every call is a step: let the other attempts run before this one's.
		runtime.Gosched()
		step()
	}
	if a.fatal != nil {
		return engine.Response{}, a.fatal
	}
	if p.State() == goja.PromiseStateRejected {
		return engine.Response{}, &thrown{p.Result()}
	}
	return a.answer(p.Result())
}

// thrown is a value the handler's Promise was rejected with.
type thrown struct{ v goja.Value }

func (t *thrown) Error() string { return t.v.String() }

// request is the handler's req.
func (a *attempt) request(r *http.Request, body []byte) goja.Value {
	vm := a.vm
	req := vm.NewObject()
	req.Set("method", r.Method)
	req.Set("route", engine.TransfersRoute)
	req.Set("customer", headerOrNull(vm, r.Header, "X-Customer-Id"))
	req.Set("key", headerOrNull(vm, r.Header, "Idempotency-Key"))
	req.Set("body", string(body))
	req.Set("contentType", headerOrNull(vm, r.Header, "Content-Type"))
	req.Set("attempt", a.id)
	req.Set("now", a.h.opts.Now().UnixMilli())
	return req
}

// headerOrNull is the header's lines joined as HTTP joins them, or null
// when there is none or it is empty.
func headerOrNull(vm *goja.Runtime, h http.Header, name string) goja.Value {
	v := strings.Join(h.Values(name), ", ")
	if v == "" {
		return goja.Null()
	}
	return vm.ToValue(v)
}

// later queues work for the loop and returns the Promise it settles. work
// runs on the attempt's goroutine, outside JavaScript; what it returns is
// turned into JavaScript values there. frames is where the call was made,
// for the stack of the error it may reject with.
func (a *attempt) later(work func() (func() goja.Value, error)) goja.Value {
	p, resolve, reject := a.vm.NewPromise()
	frames := a.vm.CaptureCallStack(0, nil)
	a.queue = append(a.queue, func() {
		value, err := work()
		var ferr error
		if err != nil {
			ferr = reject(a.errorValue(err, frames))
		} else {
			ferr = resolve(value())
		}
		if ferr != nil && a.fatal == nil {
			a.fatal = ferr
		}
	})
	return a.vm.ToValue(p)
}

// errorValue is the Error a db or pay call rejects with: name and code as
// the handler API says, and a stack that starts at the student's call.
func (a *attempt) errorValue(err error, frames []goja.StackFrame) goja.Value {
	name, code, msg := "SQLError", "", err.Error()
	var se *sqlError
	var pe *paymentError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errBudget):
		name, msg = "TimeoutError", "the attempt ran past its time budget of "+a.h.opts.Budget.String()
	case errors.As(err, &pe):
		name = "PaymentError"
	case errors.As(err, &se):
		msg = se.msg
		if se.constraint() {
			name, code = "ConstraintError", se.code
		}
	}
	obj, e := a.vm.New(a.vm.Get("Error"), a.vm.ToValue(msg))
	if e != nil {
		return a.vm.ToValue(msg)
	}
	obj.Set("name", name)
	if code != "" {
		obj.Set("code", code)
	}
	var b bytes.Buffer
	b.WriteString(name + ": " + msg)
	for i := range frames {
		b.WriteString("\n\tat ")
		frames[i].Write(&b)
	}
	obj.Set("stack", b.String())
	return obj
}

// db is the handler's db: the attempt's own connection, opened at its
// first call.
func (a *attempt) db() goja.Value {
	vm := a.vm
	db := vm.NewObject()
	statement := func(m mode) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			sql, params, err := statementArgs(call)
			return a.later(func() (func() goja.Value, error) {
				if err != nil {
					return nil, err
				}
				res, err := a.exec(sql, params, m)
				if err != nil {
					return nil, err
				}
				return func() goja.Value { return a.resultValue(res, m) }, nil
			})
		}
	}
	control := func(sql string) func(goja.FunctionCall) goja.Value {
		return func(goja.FunctionCall) goja.Value {
			return a.later(func() (func() goja.Value, error) {
				if _, err := a.exec(sql, nil, modeRun); err != nil {
					return nil, err
				}
				return goja.Undefined, nil
			})
		}
	}
	db.Set("run", statement(modeRun))
	db.Set("get", statement(modeGet))
	db.Set("all", statement(modeAll))
	db.Set("begin", control("BEGIN IMMEDIATE"))
	db.Set("commit", control("COMMIT"))
	db.Set("rollback", control("ROLLBACK"))
	return db
}

// statementArgs reads a db call's SQL and parameters into Go values.
func statementArgs(call goja.FunctionCall) (string, []any, error) {
	sqlArg := call.Argument(0)
	sql, ok := export(sqlArg).(string)
	if !ok {
		return "", nil, &sqlError{msg: "the first argument must be the SQL, a string"}
	}
	var params []any
	for i, v := range call.Arguments[1:] {
		switch x := export(v).(type) {
		case nil:
			params = append(params, nil)
		case int64:
			params = append(params, x)
		case float64:
			if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
				params = append(params, int64(x))
			} else {
				params = append(params, x)
			}
		case string:
			params = append(params, x)
		case bool:
			params = append(params, map[bool]int64{false: 0, true: 1}[x])
		default:
			return "", nil, &sqlError{msg: fmt.Sprintf("parameter %d is %s: bind numbers, strings or null", i+1, v.String())}
		}
	}
	return sql, params, nil
}

// exec runs a statement on the attempt's connection, opening it first.
func (a *attempt) exec(sql string, params []any, m mode) (result, error) {
	if err := a.ctx.Err(); err != nil {
		return result{}, err
	}
	if a.conn == nil {
		c, err := a.h.conn()
		if err != nil {
			return result{}, err
		}
		a.conn = c
		c.SetInterrupt(a.ctx)
	}
	res, err := execute(a.conn, sql, params, m)
	if err != nil && a.overBudget() {
		return result{}, context.DeadlineExceeded
	}
	return res, err
}

// overBudget reports whether the attempt's budget has run out, by the
// clock: the context's own timer may fire a moment later.
func (a *attempt) overBudget() bool {
	dl, _ := a.ctx.Deadline()
	return a.ctx.Err() != nil || !time.Now().Before(dl)
}

// resultValue is what a db call resolves to.
func (a *attempt) resultValue(res result, m mode) goja.Value {
	vm := a.vm
	rowValue := func(row []column) goja.Value {
		o := vm.NewObject()
		for _, c := range row {
			o.Set(c.name, c.value)
		}
		return o
	}
	switch m {
	case modeGet:
		if len(res.rows) == 0 {
			return goja.Undefined()
		}
		return rowValue(res.rows[0])
	case modeAll:
		rows := make([]any, len(res.rows))
		for i, r := range res.rows {
			rows[i] = rowValue(r)
		}
		return vm.NewArray(rows...)
	}
	o := vm.NewObject()
	o.Set("changes", res.changes)
	o.Set("lastInsertRowid", res.lastID)
	return o
}

// pay is the handler's pay({from, to, amount, key}).
func (a *attempt) pay(call goja.FunctionCall) goja.Value {
	args, err := a.chargeArgs(call.Argument(0))
	return a.later(func() (func() goja.Value, error) {
		if err != nil {
			return nil, err
		}
		if err := a.ctx.Err(); err != nil {
			return nil, err
		}
		ch, err := a.h.pay.charge(a.ctx, args)
		if err != nil {
			return nil, err
		}
		return func() goja.Value {
			o := a.vm.NewObject()
			o.Set("charge_id", ch.ID)
			o.Set("amount", ch.Amount)
			o.Set("replayed", ch.Replayed)
			return o
		}, nil
	})
}

func (a *attempt) chargeArgs(v goja.Value) (chargeArgs, error) {
	bad := &paymentError{"pay takes {from, to, amount, key}: two account ids, a whole amount > 0 and, if you pass one, a key string"}
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return chargeArgs{}, bad
	}
	o := v.ToObject(a.vm)
	args := chargeArgs{attempt: a.id, at: a.h.opts.Now().UnixMilli()}
	var ok bool
	if args.from, ok = export(o.Get("from")).(string); !ok {
		return args, bad
	}
	if args.to, ok = export(o.Get("to")).(string); !ok {
		return args, bad
	}
	if args.amount, ok = wholeNumber(o.Get("amount")); !ok || args.amount <= 0 {
		return args, bad
	}
	if k := o.Get("key"); k != nil && !goja.IsUndefined(k) && !goja.IsNull(k) {
		if args.key, ok = export(k).(string); !ok || args.key == "" {
			return args, bad
		}
	}
	return args, nil
}

// answer turns the handler's {status, headers, body} into a response.
func (a *attempt) answer(v goja.Value) (engine.Response, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return engine.Response{}, errors.New("transfer returned no answer: return {status, headers, body}")
	}
	o, ok := v.(*goja.Object)
	if !ok {
		return engine.Response{}, fmt.Errorf("transfer returned %s, not {status, headers, body}", v.String())
	}
	status, ok := wholeNumber(o.Get("status"))
	if !ok || status < 200 || status > 599 {
		return engine.Response{}, fmt.Errorf("transfer answered status %v: a whole number from 200 to 599", o.Get("status"))
	}
	resp := engine.Response{Status: int(status)}
	if hv := o.Get("headers"); hv != nil && !goja.IsUndefined(hv) && !goja.IsNull(hv) {
		ho, ok := hv.(*goja.Object)
		if !ok {
			return engine.Response{}, errors.New("transfer answered headers that are not an object of names to strings")
		}
		for _, name := range ho.Keys() {
			val := ho.Get(name)
			switch export(val).(type) {
			case string, int64, float64:
			default:
				return engine.Response{}, fmt.Errorf("transfer answered the header %s as %s, not a string", name, val.String())
			}
			resp.Header = append(resp.Header, engine.Header{Name: name, Value: val.String()})
		}
	}
	if bv := o.Get("body"); bv != nil && !goja.IsUndefined(bv) && !goja.IsNull(bv) {
		s, ok := export(bv).(string)
		if !ok {
			return engine.Response{}, errors.New("transfer answered a body that is not a string: JSON.stringify it, or use lab.json")
		}
		resp.Body = []byte(s)
	}
	return resp, nil
}

// position finds "file.js:12:5" in a stack.
var position = regexp.MustCompile(`([^\s()]+\.js):(\d+):(\d+)`)

// threw answers 500 for an attempt that ended without an answer, naming
// the handler's line when the stack has one, and logs it.
func (a *attempt) threw(err error) engine.Response {
	what, stack := err.Error(), ""
	var t *thrown
	var ex *goja.Exception
	var interrupted *goja.InterruptedError
	switch {
	case errors.As(err, &interrupted) && interrupted.Value() == errMemory:
		what = fmt.Sprintf("transfer was stopped: the endpoint's memory passed its budget of %d MiB (a loop that keeps allocating?)", a.h.opts.MaxHeap>>20)
		stack = interrupted.String()
		// What the stopped attempt held is garbage now: collect it before
		// the next attempt looks at the heap.
		runtime.GC()
	case errors.As(err, &interrupted) || errors.Is(err, errBudget):
		what = "transfer ran past its time budget of " + a.h.opts.Budget.String() + " and was stopped (an endless loop, or a wait that never ends?)"
		if interrupted != nil {
			stack = interrupted.String()
		}
	case errors.As(err, &t):
		stack = t.v.String()
		if o, ok := t.v.(*goja.Object); ok {
			if s := o.Get("stack"); s != nil && !goja.IsUndefined(s) {
				stack = s.String()
			}
		}
		what = "transfer threw " + strings.SplitN(stack, "\n", 2)[0]
	case errors.As(err, &ex):
		stack = ex.String()
		what = "transfer threw " + strings.SplitN(stack, "\n", 2)[0]
	}
	if m := position.FindStringSubmatch(stack); m != nil && m[1] == a.h.name {
		what += " at " + m[1] + " line " + m[2] + ":" + m[3]
	}
	a.h.log.Printf("lab: %s: %s\n%s", a.id, what, stack)
	p := engine.CauseInternal.Problem(what)
	return p.Response()
}

// export is v as a Go value; nil for a property that does not exist.
func export(v goja.Value) any {
	if v == nil {
		return nil
	}
	return v.Export()
}

// wholeNumber is v as an int64 when it is a whole number (JavaScript has
// one number type: 201 and 201.0 are the same).
func wholeNumber(v goja.Value) (int64, bool) {
	switch n := export(v).(type) {
	case int64:
		return n, true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) <= 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}
