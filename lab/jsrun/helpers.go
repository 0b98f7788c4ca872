package jsrun

// helpers.go is the handler's global lab: the engine's own parsers, the
// one fingerprint's canonical form and the one problem+json writer, offered
// to JavaScript. None of them is a step: they run at once.

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/dop251/goja"
	"github.com/gowebpki/jcs"

	"idemlab/engine"
)

// installLab sets the global lab in vm; its log lines carry who.
func installLab(vm *goja.Runtime, h *Handler, who string) {
	lab := vm.NewObject()
	str := func(v goja.Value) (string, bool) {
		s, ok := export(v).(string)
		return s, ok
	}
	lab.Set("parseKey", func(raw goja.Value) goja.Value {
		s, ok := str(raw)
		if !ok {
			return goja.Null()
		}
		key, p := engine.ParseKey([]string{s})
		if p != nil {
			return goja.Null()
		}
		return vm.ToValue(key)
	})
	lab.Set("parseTransfer", func(body goja.Value) goja.Value {
		s, ok := str(body)
		if !ok {
			return goja.Null()
		}
		t, p := engine.ParseTransfer([]byte(s))
		if p != nil {
			return goja.Null()
		}
		o := vm.NewObject()
		o.Set("from", t.From)
		o.Set("to", t.To)
		o.Set("amount", t.Amount)
		return o
	})
	lab.Set("canonical", func(body goja.Value) goja.Value {
		s, ok := str(body)
		if !ok {
			return goja.Null()
		}
		// A transfer's canonical form is the engine's, the one the
		// fingerprint hashes; any other JSON gets RFC 8785's from the
		// library the engine's form is tested against.
		if t, p := engine.ParseTransfer([]byte(s)); p == nil {
			return vm.ToValue(string(t.Canonical()))
		}
		c, err := jcs.Transform([]byte(s))
		if err != nil {
			return goja.Null()
		}
		return vm.ToValue(string(c))
	})
	lab.Set("sha256", func(text goja.Value) string {
		sum := sha256.Sum256([]byte(text.String()))
		return hex.EncodeToString(sum[:])
	})
	stringify, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	answer := func(status goja.Value, contentType string, body string, extra goja.Value) goja.Value {
		headers := vm.NewObject()
		headers.Set("Content-Type", contentType)
		if o, ok := extra.(*goja.Object); ok {
			for _, k := range o.Keys() {
				headers.Set(k, o.Get(k))
			}
		}
		a := vm.NewObject()
		a.Set("status", status)
		a.Set("headers", headers)
		a.Set("body", body)
		return a
	}
	lab.Set("json", func(call goja.FunctionCall) goja.Value {
		body, err := stringify(goja.Undefined(), call.Argument(1))
		if err != nil {
			panic(err)
		}
		return answer(call.Argument(0), "application/json", body.String(), call.Argument(2))
	})
	lab.Set("problem", func(call goja.FunctionCall) goja.Value {
		status := call.Argument(0).ToInteger()
		p := engine.Problem{Type: "about:blank", Title: call.Argument(1).String(), Status: int(status)}
		if d := call.Argument(2); !goja.IsUndefined(d) && !goja.IsNull(d) {
			p.Detail = d.String()
		}
		return answer(call.Argument(0), "application/problem+json", string(p.Response().Body), call.Argument(3))
	})
	lab.Set("log", func(call goja.FunctionCall) goja.Value {
		parts := make([]string, len(call.Arguments))
		for i, v := range call.Arguments {
			parts[i] = v.String()
			if o, ok := v.(*goja.Object); ok && o.ClassName() != "Error" {
				if s, err := stringify(goja.Undefined(), o); err == nil && !goja.IsUndefined(s) {
					parts[i] = s.String()
				}
			}
		}
		h.log.Printf("lab.log %s: %s", who, strings.Join(parts, " "))
		return goja.Undefined()
	})
	vm.Set("lab", lab)
}
