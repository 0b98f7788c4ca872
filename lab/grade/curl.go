// The curl lines a failure or a note shows: the requests that reproduce it,
// as shell lines a student can paste.

package grade

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"idemlab/lab"
)

// Curl renders a request as a curl line a student can paste.
func Curl(base string, r Request) string {
	var b strings.Builder
	b.WriteString("curl -sS -i")
	if r.Method != "GET" {
		b.WriteString(" -X " + r.Method)
	}
	b.WriteString(" " + shellQuote(strings.TrimRight(base, "/")+r.Path))
	for _, h := range r.Header {
		b.WriteString(" -H " + shellQuote(h[0]+": "+h[1]))
	}
	if r.Body != "" {
		b.WriteString(" --data-raw " + shellQuote(r.Body))
	}
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// withFirstUses returns the attempts (indexes, in order) together with the
// first use of each one's key, when that came earlier: a request whose key
// someone used before it only misbehaves after that first use, so the
// lines must include it to reproduce the failure.
func withFirstUses(attempts []int, key func(int) string) []int {
	out := append([]int(nil), attempts...)
	shown := map[int]bool{}
	for _, i := range out {
		shown[i] = true
	}
	for _, i := range attempts {
		k := key(i)
		if k == "" {
			continue
		}
		for j := 0; j < i; j++ {
			if key(j) == k {
				if !shown[j] {
					shown[j] = true
					out = append(out, j)
				}
				break
			}
		}
	}
	sort.Ints(out)
	return out
}

// dayCurl shows a day's violation: the accounts its attempts touch, the
// attempts, then the balances.
func dayCurl(base string, d lab.Day, run DayRun, idx []int) []string {
	if len(idx) == 0 {
		return nil
	}
	idx = withFirstUses(withOverlapped(idx, d), func(i int) string { return d.Attempts[i].Key })
	opening := d.StartBalances()
	var ids, lines []string
	seen := map[string]bool{}
	for _, i := range idx {
		for _, id := range []string{d.Attempts[i].From, d.Attempts[i].To} {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
				lines = append(lines, Curl(base, putRequest(id, opening[id])))
			}
		}
	}
	for _, i := range idx {
		if d.Attempts[i].Overlaps != "" {
			lines = append(lines, "# the next request was sent while "+d.Attempts[i].Overlaps+" was still being processed")
		}
		if run.Requests[i].Cut {
			lines = append(lines, "# the grader cut the next connection as its answer arrived, unread ("+d.Attempts[i].Loss+")")
		}
		lines = append(lines, Curl(run.baseOf(i, base), run.Requests[i]))
	}
	for _, id := range ids {
		lines = append(lines, Curl(base, Request{Method: "GET", Path: "/accounts/" + id}))
	}
	return lines
}

// withOverlapped returns the attempts (indexes, in order) with the
// attempt each was sent beside (lab.DayAttempt.Overlaps): the lines'
// comment "sent while … was still being processed" names a request they
// show, which a 409 owed to it needs.
func withOverlapped(idx []int, d lab.Day) []int {
	out := append([]int(nil), idx...)
	in := map[int]bool{}
	for _, i := range out {
		in[i] = true
	}
	for _, i := range idx {
		lane := d.Attempts[i].Overlaps
		if lane == "" {
			continue
		}
		for j := range d.Attempts {
			if d.Attempts[j].Lane == lane {
				if !in[j] {
					in[j] = true
					out = append(out, j)
				}
				break
			}
		}
	}
	sort.Ints(out)
	return out
}

func putRequest(id string, balance int64) Request {
	return Request{Method: "PUT", Path: "/accounts/" + id, Header: [][2]string{{"Content-Type", "application/json"}},
		Body: `{"balance":` + strconv.FormatInt(balance, 10) + `}`}
}

// curl renders the run's accounts and the given attempts (every
// attempt when none is given) as paste-able lines: the accounts to open,
// the requests in order (with the grader's own requests between them,
// such as a top-up), then the balances to read.
func (cr *checkRun) curl(attempts []int) []string {
	base := cr.g.c.Base()
	if len(attempts) == 0 {
		for i := range cr.attempts {
			attempts = append(attempts, i)
		}
	}
	attempts = withFirstUses(attempts, func(i int) string { return cr.attempts[i].Key })
	named := func(id string) bool {
		for _, i := range attempts {
			if strings.Contains(cr.reqs[i].Body, strconv.Quote(id)) {
				return true
			}
		}
		return false
	}
	// Only the accounts the shown requests name, so the sequence stays short.
	var accounts []string
	for _, id := range cr.accounts {
		if named(id) {
			accounts = append(accounts, id)
		}
	}
	var lines []string
	for _, id := range accounts {
		if b, ok := cr.opening[id]; ok {
			lines = append(lines, Curl(base, putRequest(id, b)))
		}
	}
	groupSize := func(g int, among []int) int {
		n := 0
		for _, j := range among {
			if cr.together[j] == g {
				n++
			}
		}
		return n
	}
	all := make([]int, len(cr.attempts))
	for i := range all {
		all[i] = i
	}
	shownInter := map[int]bool{}
	group := 0 // the group of simultaneous requests being written, 0 when none
	endGroup := func() {
		if group != 0 {
			lines = append(lines, "wait")
			group = 0
		}
	}
	for _, i := range attempts {
		for k, in := range cr.interludes {
			if !shownInter[k] && in.before <= i && named(in.account) {
				endGroup()
				shownInter[k] = true
				lines = append(lines, "# "+in.comment, Curl(base, in.req))
			}
		}
		g := cr.together[i]
		if g != group {
			endGroup()
		}
		if g != 0 {
			if n := groupSize(g, attempts); n >= 2 {
				if group != g {
					lines = append(lines, fmt.Sprintf("# the next %d requests arrived at the same moment: end each line with & and run them together", n))
					group = g
				}
			} else {
				lines = append(lines, fmt.Sprintf("# the next request was one of %d sent at the same moment", groupSize(g, all)))
			}
		}
		if cr.reqs[i].Cut {
			lines = append(lines, "# the grader cut the next connection as its answer arrived, without reading it")
		}
		line := Curl(cr.baseOf(i), cr.reqs[i])
		if group != 0 {
			line += " &"
		}
		lines = append(lines, line)
	}
	endGroup()
	for _, id := range accounts {
		lines = append(lines, Curl(base, Request{Method: "GET", Path: "/accounts/" + id}))
	}
	return lines
}
