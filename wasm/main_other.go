//go:build !js

package main

import (
	"fmt"
	"os"
)

// main explains itself: the module runs in a browser. Build it with
// GOOS=js GOARCH=wasm (make wasm).
func main() {
	fmt.Fprintln(os.Stderr, "idemlab's wasm module runs in a browser: build it with GOOS=js GOARCH=wasm go build ./wasm")
	os.Exit(2)
}
