package main

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// instructorToken finds the classroom instructor's secret: the first line of
// file, else $IDEMLAB_INSTRUCTOR_TOKEN, else flag (with a warning: a
// command line is visible to every user of the machine in ps), else none
// (""): the classroom then uses the one it keeps beside the database, or
// makes one (24 random bytes, hex). The classroom refuses a secret shorter
// than classroom.MinTokenLength.
func instructorToken(file, flag string, log *slog.Logger) (token string, err error) {
	switch {
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", fmt.Errorf("instructor token file: %w", err)
		}
		defer f.Close()
		line, err := bufio.NewReader(f).ReadString('\n')
		if line = strings.TrimSpace(line); line == "" {
			return "", fmt.Errorf("instructor token file %s: its first line is empty (%v)", file, err)
		}
		return line, nil
	case os.Getenv("IDEMLAB_INSTRUCTOR_TOKEN") != "":
		return os.Getenv("IDEMLAB_INSTRUCTOR_TOKEN"), nil
	case flag != "":
		log.Warn("--instructor-token puts the secret on the command line, where every user of this machine can read it (ps); use --instructor-token-file or IDEMLAB_INSTRUCTOR_TOKEN")
		return flag, nil
	}
	// None given: the classroom keeps the one it made before, beside --db,
	// or makes one (and the caller prints it that once).
	return "", nil
}
