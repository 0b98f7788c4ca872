package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"idemlab/lab/grade"
)

// isTerminal reports whether w is a terminal (a character device), where a
// progress line helps; piped or redirected, the commands stay quiet.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// statusLine rewrites one line of a terminal in place, at most ten times a
// second: a text that is not final is dropped when the line changed less
// than 100 ms ago. With no writer it draws nothing. It is safe for
// concurrent use: the day's replay reports from many goroutines at once.
type statusLine struct {
	mu    sync.Mutex
	w     io.Writer
	width int // of the text drawn, 0 when none is
	last  time.Time
}

// set draws text in place of the line.
func (l *statusLine) set(text string, final bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil || !final && time.Since(l.last) < 100*time.Millisecond {
		return
	}
	l.last = time.Now()
	pad := ""
	if n := l.width - len(text); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	l.width = len(text)
	fmt.Fprint(l.w, "\r"+text+pad)
}

// erase wipes the line, leaving the cursor at its start.
func (l *statusLine) erase() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.width > 0 {
		fmt.Fprint(l.w, "\r"+strings.Repeat(" ", l.width)+"\r")
		l.width = 0
	}
}

// keep ends the line as it stands, so that what follows starts below it.
func (l *statusLine) keep() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.width > 0 {
		fmt.Fprint(l.w, "\n")
		l.width = 0
	}
}

// progressLine says where the grader is, on a line that is wiped at the end.
type progressLine struct{ statusLine }

func newProgressLine(w io.Writer) *progressLine { return &progressLine{statusLine{w: w}} }

func (p *progressLine) show(g grade.Progress) {
	line := fmt.Sprintf("grading: check %d of %d, %s", g.N, g.Of, g.Check)
	if g.Total > 0 {
		line += fmt.Sprintf(": %d of %d requests answered", g.Done, g.Total)
	}
	p.set(line, g.Done >= g.Total) // a check's start always shows
}

func (p *progressLine) clear() { p.erase() }

// progressBar draws a day's replay as a bar on a terminal, and nothing
// anywhere else; the bar stays when the replay ends.
type progressBar struct{ statusLine }

func newProgressBar(stdout io.Writer) *progressBar {
	if isTerminal(stdout) {
		return &progressBar{statusLine{w: stdout}}
	}
	return &progressBar{}
}

func (b *progressBar) update(done, total int) {
	if total == 0 {
		return
	}
	const width = 40
	n := done * width / total
	b.set(fmt.Sprintf("[%s%s] %3d%% %d/%d attempts", strings.Repeat("#", n), strings.Repeat(".", width-n), done*100/total, done, total), done >= total)
}

func (b *progressBar) done() { b.keep() }
