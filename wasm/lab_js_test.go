package main

import (
	"syscall/js"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLabFunctionsAnswerAtOnce calls the lab's functions as the runner
// worker does: each answers with a JSON string, not a Promise.
func TestLabFunctionsAnswerAtOnce(t *testing.T) {
	js.Global().Set("idemlab", js.Global().Get("Object").New())
	lb := newLabBridge()
	funcs := exportLab(lb)
	defer func() {
		for _, f := range funcs {
			f.Release()
		}
		lb.closeAll()
	}()
	api := js.Global().Get("idemlab")
	opened := api.Call("labOpen", labSchema, `[{"id":"alice","balance":5}]`)
	require.Equal(t, js.TypeString, opened.Type())
	d := labDecode(t, opened.String()).DB
	c := labDecode(t, api.Call("labConn", d, "a1").String()).Conn
	got := api.Call("labExec", d, c, "get", "SELECT balance FROM accounts WHERE id = ?", `["alice"]`)
	require.Equal(t, js.TypeString, got.Type())
	assert.JSONEq(t, `{"ok":{"row":{"balance":5}},"tx":false}`, got.String())
}
