// Command compress writes the brotli and gzip copies of a file that the
// playground's server and its static export send instead of the file
// itself. It runs at build time (`make wasm`), so serving costs no CPU.
//
// Usage: go run ./web/internal/compress -o DIR FILE
//
// It rewrites the copies only when FILE changed since they were made (a
// SHA-256 of FILE is kept in DIR/NAME.sum), because brotli at its best
// quality takes several seconds on the 15 MB module.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/andybalholm/brotli"
)

func main() {
	outDir := flag.String("o", ".", "folder for NAME.br, NAME.gz and NAME.sum")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: compress -o DIR FILE")
		os.Exit(2)
	}
	if err := compress(flag.Arg(0), *outDir); err != nil {
		fmt.Fprintln(os.Stderr, "compress:", err)
		os.Exit(1)
	}
}

func compress(src, outDir string) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read module: %w", err)
	}
	sum := sha256.Sum256(raw)
	hexSum := hex.EncodeToString(sum[:])
	base := filepath.Join(outDir, filepath.Base(src))
	if old, err := os.ReadFile(base + ".sum"); err == nil && string(bytes.TrimSpace(old)) == hexSum {
		if fileExists(base+".br") && fileExists(base+".gz") {
			fmt.Printf("%s: compressed copies are up to date\n", base)
			return nil
		}
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	var br bytes.Buffer
	bw := brotli.NewWriterOptions(&br, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: 24})
	bw.Write(raw)
	if err := bw.Close(); err != nil {
		return fmt.Errorf("brotli: %w", err)
	}
	// The .sum goes last: a run killed half way leaves it stale and the
	// next run makes the copies again.
	for _, f := range []struct {
		name string
		data []byte
	}{{base + ".gz", gz.Bytes()}, {base + ".br", br.Bytes()}, {base + ".sum", []byte(hexSum + "\n")}} {
		if err := os.WriteFile(f.name, f.data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	fmt.Printf("%s: raw %d bytes, gzip %d, brotli %d\n", base, len(raw), gz.Len(), br.Len())
	return nil
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
