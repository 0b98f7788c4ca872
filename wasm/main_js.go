package main

import (
	"fmt"
	"syscall/js"
	"time"
)

// yieldEvery is how long a day replays before it lets the worker's event
// loop run: only then can the page's "stop" message arrive.
const yieldEvery = 50 * time.Millisecond

// main exports the bridge as globalThis.idemlab, tells the page it is ready
// and then waits forever: the module lives as long as its Web Worker, and
// so do the exported functions (the per-call Promise executors are
// released as soon as they have run).
func main() {
	export(newBridge())
	directLab = newLabBridge()
	exportLab(directLab)
	if ready := js.Global().Get("idemlabReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}

// export sets globalThis.idemlab to an object of functions that each return
// a Promise of a JSON string. It returns the js.Funcs so that they can be
// released.
func export(b *bridge) []js.Func {
	api := js.Global().Get("Object").New()
	var funcs []js.Func
	def := func(name string, nargs int, work func(args []string, raw []js.Value) string) {
		f := js.FuncOf(func(this js.Value, args []js.Value) any {
			// Arguments are read now, on the caller's turn; the work runs in
			// a goroutine so that a step or a day never blocks the caller.
			strs := make([]string, nargs)
			for i := 0; i < nargs && i < len(args); i++ {
				if args[i].Type() == js.TypeString {
					strs[i] = args[i].String()
				}
			}
			return promise(func() string { return work(strs, args) })
		})
		funcs = append(funcs, f)
		api.Set(name, f)
	}
	def("version", 0, func([]string, []js.Value) string { return b.version() })
	def("open", 2, func(a []string, _ []js.Value) string { return b.open(a[0], a[1]) })
	def("step", 2, func(a []string, _ []js.Value) string { return b.step(a[0], a[1]) })
	def("back", 1, func(a []string, _ []js.Value) string { return b.back(a[0]) })
	def("run", 1, func(a []string, _ []js.Value) string { return b.run(a[0]) })
	def("reset", 1, func(a []string, _ []js.Value) string { return b.reset(a[0]) })
	def("inject", 3, func(a []string, _ []js.Value) string { return b.inject(a[0], a[1], a[2]) })
	def("setPolicy", 2, func(a []string, _ []js.Value) string { return b.setPolicy(a[0], a[1]) })
	def("close", 1, func(a []string, _ []js.Value) string { return b.close(a[0]) })
	def("day", 1, func(a []string, raw []js.Value) string {
		var cb js.Value
		if len(raw) > 1 && raw[1].Type() == js.TypeFunction {
			cb = raw[1]
		}
		last, yielded := -1, time.Now()
		progress := func(done, total int) {
			// At most about a hundred calls per day: enough for a bar.
			if step := total / 100; cb.Truthy() && (done == total || step == 0 || done/step != last) {
				if step > 0 {
					last = done / step
				}
				cb.Invoke(done, total)
			}
			// The replay never blocks, and Go hands the JavaScript event
			// loop back only when every goroutine waits: a short sleep now
			// and then is what lets stopDay in.
			if time.Since(yielded) >= yieldEvery {
				time.Sleep(time.Millisecond)
				yielded = time.Now()
			}
		}
		return b.day(a[0], progress)
	})
	def("stopDay", 1, func(a []string, _ []js.Value) string { return b.stopDay(a[0]) })
	js.Global().Set("idemlab", api)
	return funcs
}

// promise runs work in a goroutine and resolves with its JSON. A panic is
// resolved as {"error":…} rather than taking the module down.
func promise(work func() string) js.Value {
	executor := js.FuncOf(func(this js.Value, args []js.Value) any {
		resolve := args[0]
		go func() {
			result := func() (out string) {
				defer func() {
					if r := recover(); r != nil {
						out = errorJSON(fmt.Errorf("internal error: %v", r))
					}
				}()
				return work()
			}()
			resolve.Invoke(result)
		}()
		return nil
	})
	// The Promise constructor calls the executor before it returns, so the
	// function can be released at once.
	p := js.Global().Get("Promise").New(executor)
	executor.Release()
	return p
}

// exportLab adds the lab's database functions (wasm/lab.go) to
// globalThis.idemlab. Unlike the bridge's, they answer at once with a JSON
// string, no Promise: each is one short SQLite call that never waits for a
// goroutine, made thousands of times a second by the lab's explorer.
func exportLab(lb *labBridge) []js.Func {
	api := js.Global().Get("idemlab")
	var funcs []js.Func
	def := func(name string, nargs int, work func(a []string) string) {
		f := js.FuncOf(func(this js.Value, args []js.Value) (out any) {
			strs := make([]string, nargs)
			for i := 0; i < nargs && i < len(args); i++ {
				if args[i].Type() == js.TypeString {
					strs[i] = args[i].String()
				}
			}
			defer func() {
				if r := recover(); r != nil {
					out = labFail(fmt.Errorf("internal error: %v", r))
				}
			}()
			return work(strs)
		})
		funcs = append(funcs, f)
		api.Set(name, f)
	}
	def("labOpen", 2, func(a []string) string { return lb.open(a[0], a[1]) })
	def("labConn", 2, func(a []string) string { return lb.conn(a[0], a[1]) })
	def("labExec", 5, func(a []string) string { return lb.exec(a[0], a[1], a[2], a[3], a[4]) })
	// labStep is labExec with its arguments in one string (see
	// splitStep): each string crossing into Go costs two calls back into
	// JavaScript, and a step is the explorer's commonest call.
	def("labStep", 1, func(a []string) string { return lb.step(a[0]) })
	def("labRelease", 2, func(a []string) string { return lb.release(a[0], a[1]) })
	def("labReset", 2, func(a []string) string { return lb.reset(a[0], a[1]) })
	def("labPay", 2, func(a []string) string { return lb.pay(a[0], a[1]) })
	def("labDump", 1, func(a []string) string { return lb.dump(a[0]) })
	def("labSetBalance", 3, func(a []string) string { return lb.setBalance(a[0], a[1], a[2]) })
	def("labJudge", 2, func(a []string) string { return lb.judge(a[0], a[1]) })
	def("labClose", 1, func(a []string) string { return lb.close(a[0]) })
	def("labHelper", 2, func(a []string) string { return lb.helper(a[0], a[1]) })
	def("labScenario", 2, func(a []string) string { return lb.scenario(a[0], a[1]) })
	def("labVerdict", 2, func(a []string) string { return lb.verdict(a[0], a[1]) })
	def("labDay", 2, func(a []string) string { return labDay(a[0], a[1]) })
	return funcs
}
