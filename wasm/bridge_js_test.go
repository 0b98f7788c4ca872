package main

import (
	"encoding/json"
	"syscall/js"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// await waits for a Promise the way a page does, with .then; the guard
// only stops a hung test, it measures nothing.
func await(t *testing.T, p js.Value) string {
	t.Helper()
	require.Equal(t, "Promise", p.Get("constructor").Get("name").String(), "every function returns a Promise")
	ch := make(chan string, 1)
	then := js.FuncOf(func(this js.Value, args []js.Value) any {
		ch <- args[0].String()
		return nil
	})
	defer then.Release()
	p.Call("then", then)
	select {
	case s := <-ch:
		return s
	case <-time.After(2 * time.Minute):
		t.Fatal("the Promise never resolved")
		return ""
	}
}

// TestExportedFunctionsThroughJavaScript calls globalThis.idemlab as the
// Web Worker does: JSON strings in, Promises of JSON strings out.
func TestExportedFunctionsThroughJavaScript(t *testing.T) {
	b := newBridge()
	funcs := export(b)
	defer func() {
		for _, f := range funcs {
			f.Release()
		}
		b.closeAll()
	}()
	api := js.Global().Get("idemlab")
	for _, name := range []string{"version", "open", "step", "back", "run", "reset", "inject", "setPolicy", "day", "close"} {
		assert.Equal(t, js.TypeFunction, api.Get(name).Type(), name)
	}
	assert.Contains(t, await(t, api.Call("version")), `"levels"`)

	var opened struct {
		Session string
		State   json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(await(t, api.Call("open", doubleTap, ""))), &opened))
	id := opened.Session
	require.NotEmpty(t, id)

	for _, lane := range []string{"A1", "A1", "A2", "A2", "A1", "A2"} {
		require.Empty(t, decode(t, await(t, api.Call("step", id, lane))).Error)
	}
	prev := await(t, api.Call("step", id, "A1"))
	back := decode(t, await(t, api.Call("back", id)))
	assert.Equal(t, 6, back.Step)
	assert.JSONEq(t, prev, await(t, api.Call("step", id, "A1")))
	st := decode(t, await(t, api.Call("run", id)))
	assert.True(t, st.Done)
	assert.Len(t, st.Transfers, 2, "SELECT, SELECT, INSERT, INSERT pays twice in the browser too")

	st = decode(t, await(t, api.Call("setPolicy", id, `{"claim":"constraint"}`)))
	assert.Equal(t, 0, st.Step)
	st = decode(t, await(t, api.Call("inject", id, "A1", "crash")))
	assert.Equal(t, "crashed", st.Lanes[0].State)
	st = decode(t, await(t, api.Call("reset", id)))
	assert.Equal(t, 0, st.Step)
	assert.Contains(t, await(t, api.Call("step", id, "nobody")), `"error"`)
	assert.Contains(t, await(t, api.Call("open", "not json", "")), `"error"`)

	calls := 0
	progress := js.FuncOf(func(this js.Value, args []js.Value) any {
		calls++
		assert.LessOrEqual(t, args[0].Int(), args[1].Int())
		return nil
	})
	defer progress.Release()
	tally := await(t, api.Call("day", `{"level":"scoped","day":{"seed":3,"customers":4,"intents":15}}`, progress))
	var day struct {
		Error   string
		Report  struct{ OK bool }
		Picture struct {
			Buckets []json.RawMessage
		}
		PictureSVG string `json:"picture_svg"`
	}
	require.NoError(t, json.Unmarshal([]byte(tally), &day))
	require.Empty(t, day.Error)
	assert.True(t, day.Report.OK, "the full engine holds on a day in the browser")
	assert.Len(t, day.Picture.Buckets, 96, "the day's picture comes with it")
	assert.Contains(t, day.PictureSVG, "<svg ")
	assert.Positive(t, calls)

	assert.JSONEq(t, `{"closed":true}`, await(t, api.Call("close", id)))
}

// TestMainAnnouncesReady starts the module's main as the Web Worker does:
// it must export globalThis.idemlab and then call globalThis.idemlabReady.
func TestMainAnnouncesReady(t *testing.T) {
	ready := make(chan bool, 1)
	cb := js.FuncOf(func(this js.Value, args []js.Value) any {
		ready <- js.Global().Get("idemlab").Get("open").Type() == js.TypeFunction
		return nil
	})
	defer cb.Release()
	js.Global().Set("idemlabReady", cb)
	defer js.Global().Delete("idemlabReady")
	go main() // it then waits forever, as the module does
	select {
	case exported := <-ready:
		assert.True(t, exported, "idemlab is exported before idemlabReady is called")
	case <-time.After(time.Minute):
		t.Fatal("main never called idemlabReady")
	}
	assert.Contains(t, await(t, js.Global().Get("idemlab").Call("version")), `"version":"dev"`)
}
