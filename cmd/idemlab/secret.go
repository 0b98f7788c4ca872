package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// instructorToken finds the classroom instructor's secret: the first line of
// file, else $IDEMLAB_INSTRUCTOR_TOKEN, else flag (with a warning: a
// command line is visible to every user of the machine in ps), else none,
// and one is generated (generated is then true). The classroom
// refuses a secret shorter than classroom.MinTokenLength; a generated one
// is 24 random bytes, hex.
func instructorToken(file, flag string, log *slog.Logger) (token string, generated bool, err error) {
	switch {
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", false, fmt.Errorf("instructor token file: %w", err)
		}
		defer f.Close()
		line, err := bufio.NewReader(f).ReadString('\n')
		if line = strings.TrimSpace(line); line == "" {
			return "", false, fmt.Errorf("instructor token file %s: its first line is empty (%v)", file, err)
		}
		return line, false, nil
	case os.Getenv("IDEMLAB_INSTRUCTOR_TOKEN") != "":
		return os.Getenv("IDEMLAB_INSTRUCTOR_TOKEN"), false, nil
	case flag != "":
		log.Warn("--instructor-token puts the secret on the command line, where every user of this machine can read it (ps); use --instructor-token-file or IDEMLAB_INSTRUCTOR_TOKEN")
		return flag, false, nil
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", false, fmt.Errorf("generate instructor token: %w", err)
	}
	return hex.EncodeToString(b), true, nil
}
