package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrExportNotEmpty is returned when export's folder already holds files
// and replacing them was not asked for.
var ErrExportNotEmpty = errors.New("server: export folder is not empty")

// checkExportDir refuses a folder export must not write into: a symbolic
// link, something that is not a folder, or a folder that holds anything
// unless force.
func checkExportDir(dir string, force bool) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("export: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("export: %s is a symbolic link; give the folder itself", dir)
	case !fi.IsDir():
		return fmt.Errorf("export: %s is not a folder", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if len(entries) > 0 && !force {
		return fmt.Errorf("%w: %s holds %d entries; use --force to replace the site's files in it", ErrExportNotEmpty, dir, len(entries))
	}
	return nil
}

// placeSite moves the site written in tmp into dir. A dir that does not
// exist is tmp renamed, in one step. Into an existing one, each file is
// renamed over its name: a rename replaces a symbolic link at that name,
// never what it points to, and a folder on the way that is a symbolic link
// (or not a folder) stops the export, so nothing is written outside dir.
func placeSite(tmp, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	}
	return filepath.WalkDir(tmp, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(tmp, path)
		if err != nil || rel == "." {
			return err
		}
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			fi, err := os.Lstat(dst)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				if err := os.Mkdir(dst, 0o755); err != nil {
					return fmt.Errorf("export: %w", err)
				}
				return nil
			case err != nil:
				return fmt.Errorf("export: %w", err)
			case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
				return fmt.Errorf("export: %s is not a folder (a symbolic link?); it is left alone and the export stops", dst)
			}
			return nil
		}
		if fi, err := os.Lstat(dst); err == nil && fi.IsDir() {
			return fmt.Errorf("export: %s is a folder where the site has a file", dst)
		}
		if err := os.Rename(path, dst); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	})
}
