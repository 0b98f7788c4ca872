package main

import "unsafe"

// The lab's commonest calls also have a direct way in (go:wasmexport),
// beside their syscall/js functions: a function made with js.FuncOf is
// called through the Go scheduler's event loop, which costs about 50 µs
// a call in headless Chromium on a 2-core machine, where a schedule of
// the explorer makes sixteen such calls. A direct call is a plain Wasm
// call: the runner writes its argument into a buffer of the module's
// memory (directIn), calls labDirect with the call's number, and reads
// the answer from directOut's buffer (web/lab/runner.js: withDirectCalls).

// labDirectIn makes room for an argument of n bytes and returns where
// the runner writes it.
//
//go:wasmexport labDirectIn
func labDirectIn(n int32) unsafe.Pointer {
	if n < 0 {
		n = 0
	}
	if cap(directIn) < int(n) {
		directIn = make([]byte, n, max(int(n), 2*cap(directIn)))
	}
	directIn = directIn[:n]
	if n == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(directIn))
}

// labDirect runs call number fn on the n bytes written at labDirectIn and
// returns the length of its answer, which labDirectOut locates.
//
//go:wasmexport labDirect
func labDirect(fn, n int32) int32 {
	out := directCall(directLab, fn, string(directIn[:n]))
	directOut = append(directOut[:0], out...)
	return int32(len(directOut))
}

// labDirectOut is where the last direct call's answer lies.
//
//go:wasmexport labDirectOut
func labDirectOut() unsafe.Pointer {
	if len(directOut) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(directOut))
}
