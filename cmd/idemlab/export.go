package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"idemlab/server"
)

func export(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	webDir := fs.String("web-dir", "", "take the playground's files from this folder instead of the embedded copy")
	force := fs.Bool("force", false, "write into a folder that already holds files, replacing the site's own (symbolic links in it are replaced, never followed)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: idemlab export [--web-dir DIR] [--force] OUTDIR")
		fmt.Fprintln(stderr, "Writes a static site that any file host can serve; no idemlab server is needed behind it.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("export needs one output folder")
	}
	dir := fs.Arg(0)
	if err := server.ExportSite(dir, *webDir, *force); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "idemlab: wrote the playground to %s; serve that folder with any static file host\n", dir)
	return nil
}
