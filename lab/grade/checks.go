package grade

import (
	"fmt"
	"strings"
	"time"

	"idemlab/lab"
)

// Each check below is a short story against fresh accounts; the checker
// judges it afterwards, and the check adds what only it can see: answers
// that break no rule but not what the contract says are notes, and make the
// check warn.

// check is one of the grader's named stories against fresh accounts.
type check struct {
	name, title string
	run         func(cr *checkRun) error
}

var checks = []check{
	{"retry", "a retry after the answer arrived gets that answer again, byte for byte", checkRetry},
	{"cut", "a retry after a cut connection gets the answer the client never read, and no second transfer", checkCut},
	{"reordered", "the same request re-spaced, reordered, or both is a retry, not a new request", checkReordered},
	{"correction", "a corrected amount under a used key gets 422 and moves nothing, also while the first request still runs", checkCorrection},
	{"refusals", "a 402 or 404 is stored under its key: after a top-up, or once the account exists, the retry still gets it byte for byte", checkRefusals},
	{"missing-key", "a transfer without Idempotency-Key gets 400, without X-Customer-ID 401, and nothing moves", checkMissingKey},
	{"repaired", "a transfer refused 400 (bad body) or 401 (no customer) claims nothing: the repaired request under the same key is executed", checkRepaired},
	{"malformed-keys", "keys that are not an RFC 8941 string of 1 to 255 printable characters get 400 and move nothing", checkMalformedKeys},
	{"longest-key", "a valid key of exactly 255 characters is accepted, pays once and is replayed", checkLongestKey},
	{"other-customer", "another customer's key is that customer's alone: each customer's own request under it gets its own transfer", checkOtherCustomer},
	{"together", "identical retries that arrive at the same moment make one transfer, a 409 says Retry-After, then a retry gets the first answer", checkTogether},
}

// Checks lists the names of the grader's checks, the day's replay last.
func Checks() []string {
	out := make([]string, 0, len(checks)+1)
	for _, c := range checks {
		out = append(out, c.name)
	}
	return append(out, "day")
}

// expect notes an answer whose status is not one the contract gives here.
// An attempt that got no answer is already noted.
func (cr *checkRun) expect(i int, what string, want ...int) {
	a := cr.attempts[i]
	if !a.Delivered {
		return
	}
	for _, w := range want {
		if a.Status == w {
			return
		}
	}
	ws := make([]string, len(want))
	for k, w := range want {
		ws[k] = fmt.Sprint(w)
	}
	cr.note(fmt.Sprintf("%s (%s) was answered %d %s; the contract says %s", what, a.Lane, a.Status, snippet(a.Response), strings.Join(ws, " or ")), i)
}

// expectReplayHeader notes a replay that is right but does not say so.
// Only the request's own outcome can be replayed right: a receipt naming
// its transfer, or a stored 402 or 404. Two equal generic answers ("already
// processed") are both wrong, and the report must not call either right.
func (cr *checkRun) expectReplayHeader(first, retry int) {
	a, b := cr.attempts[first], cr.attempts[retry]
	outcome := lab.Success(a.Status) && lab.TransferID(a.Response) != "" || a.Status == 402 || a.Status == 404
	if outcome && a.Delivered && b.Delivered && a.Status == b.Status && string(a.Response) == string(b.Response) &&
		lab.SameContentType(a.ContentType, b.ContentType) && !cr.replies[retry].Replayed() {
		cr.note(fmt.Sprintf("the replay %s is right but lacks the header Idempotent-Replayed: true", b.Lane), first, retry)
	}
}

func checkRetry(cr *checkRun) error {
	payer, shop, err := cr.payerAndShop()
	if err != nil {
		return err
	}
	cafe, err := cr.account("cafe", 0)
	if err != nil {
		return err
	}
	cust := cr.customer("shop-1")
	in := cr.intent(cust, payer, shop, cr.amount())
	k := cr.key()
	body := lab.RenderBody(lab.StyleCompact, payer, shop, in.Amount)
	first := cr.send(in, keyed(cust, k, body))
	cr.expect(first, "a new transfer", 201)
	// Another transfer from the same payer in between, so that a replay
	// rebuilt from today's ledger shows today's balance.
	other := cr.intent(cust, payer, cafe, cr.amount())
	cr.send(other, intentRequest(other, cr.key()))
	time.Sleep(5 * time.Millisecond) // and a later time
	retry := cr.send(in, keyed(cust, k, body))
	cr.expectReplayHeader(first, retry)
	return nil
}

func checkCut(cr *checkRun) error {
	payer, shop, err := cr.payerAndShop()
	if err != nil {
		return err
	}
	cust := cr.customer("shop-1")
	in := cr.intent(cust, payer, shop, cr.amount())
	k := cr.key()
	r := intentRequest(in, k)
	cut := r
	cut.Cut = true
	cr.send(in, cut)
	a := cr.send(in, r)
	cr.expect(a, "the retry of a transfer whose answer was cut", 201)
	b := cr.send(in, r)
	cr.expectReplayHeader(a, b)
	return nil
}

// checkReordered sends the same request three more ways: re-spaced in the
// same order, reordered without spaces, then both. Which of them are
// refused tells a fingerprint of raw bytes (the re-spaced one is refused)
// from one that ignores whitespace but not the order of the members (only
// the reordered ones are).
func checkReordered(cr *checkRun) error {
	payer, shop, err := cr.payerAndShop()
	if err != nil {
		return err
	}
	cust := cr.customer("shop-1")
	in := cr.intent(cust, payer, shop, cr.amount())
	k := cr.key()
	first := cr.send(in, intentRequest(in, k))
	cr.expect(first, "a new transfer", 201)
	styles := []string{lab.StyleSpaced, lab.StyleReordered, lab.StylePretty}
	refused := map[string]int{}
	for _, style := range styles {
		i := cr.send(in, keyed(cust, k, lab.RenderBody(style, payer, shop, in.Amount)))
		if a := cr.attempts[i]; a.Delivered && !lab.Success(a.Status) && lab.Success(cr.attempts[first].Status) {
			refused[style] = i
		}
	}
	if len(refused) == 0 {
		return nil
	}
	c := lab.CauseOrderSensitive
	if _, ok := refused[lab.StyleSpaced]; ok {
		c = lab.CauseRawBytes
	}
	var said []string
	var lanes []int
	for _, style := range styles {
		if i, ok := refused[style]; ok {
			said = append(said, fmt.Sprintf("%s (%s) got %d", describeStyle(style), cr.attempts[i].Lane, cr.attempts[i].Status))
			lanes = append(lanes, i)
		} else {
			said = append(said, describeStyle(style)+" got the first answer")
		}
	}
	cr.fail(lab.RuleByteReplay, c, fmt.Sprintf("retries of the same request, written other ways, were refused instead of getting the first answer: %s",
		strings.Join(said, "; ")), append([]int{first}, lanes...)...)
	return nil
}

func describeStyle(style string) string {
	switch style {
	case lab.StyleSpaced:
		return "re-spaced in the same order"
	case lab.StyleReordered:
		return "reordered without spaces"
	case lab.StylePretty:
		return "reordered and pretty-printed"
	}
	return style
}

// checkCorrection sends a corrected amount under a used key, once the
// first answer came (owed 422), the same amount to another payee (422
// too), and then, under a fresh key, corrections together with the first
// request (owed 422 as well, not a wait).
func checkCorrection(cr *checkRun) error {
	payer, shop, err := cr.payerAndShop()
	if err != nil {
		return err
	}
	cust := cr.customer("teller-1")
	in := cr.intent(cust, payer, shop, cr.amount())
	k := cr.key()
	first := cr.send(in, intentRequest(in, k))
	cr.expect(first, "a new transfer", 201)
	// The teller corrects the amount on the same screen, which keeps the
	// key. The correction ends in tens of won, so the balances tell which
	// amount went out.
	corrected := in.Amount + 100_030
	i := cr.send(in, keyed(cust, k, lab.RenderBody(lab.StyleCompact, payer, shop, corrected)))
	if a := cr.attempts[i]; a.Delivered && a.Status != 422 && !lab.Success(a.Status) {
		cr.note(fmt.Sprintf("a different request under a used key (%s) was answered %d %s; the contract says 422", a.Lane, a.Status, snippet(a.Response)), first, i)
	}
	if a := cr.attempts[i]; !a.Delivered || a.Status != 422 {
		// No fingerprint told the correction apart: the stories below
		// would only say so again.
		return nil
	}
	// The same amount to another payee, under the same key: a fingerprint
	// of the amount alone takes it for a retry.
	other, err := cr.account("shop-2", 0)
	if err != nil {
		return err
	}
	j := cr.send(in, keyed(cust, k, lab.RenderBody(lab.StyleCompact, payer, other, in.Amount)))
	if a := cr.attempts[j]; a.Delivered && a.Status != 422 && !lab.Success(a.Status) {
		cr.note(fmt.Sprintf("the same amount to another payee under a used key (%s) was answered %d %s; the contract says 422", a.Lane, a.Status, snippet(a.Response)), first, j)
	}
	// The teller corrects the amount while the first request is still
	// being processed: the request and three corrections at the same
	// moment, under a fresh key. Whichever claims the key is the keyed
	// request; every other one that differs from it is owed 422 at once,
	// whatever the claim's state, since no retry of it can succeed. A 409
	// there tells it to wait for a request that is not its own: the
	// endpoint read the key's state before its fingerprint.
	k2 := cr.key()
	in2 := cr.intent(cust, payer, shop, cr.amount())
	fixed := keyed(cust, k2, lab.RenderBody(lab.StyleCompact, payer, shop, in2.Amount+100_030))
	ins := []lab.Intent{in2, in2, in2, in2}
	idx := cr.sendTogether(ins, []Request{intentRequest(in2, k2), fixed, fixed, fixed})
	claimer := -1
	for _, j := range idx {
		if a := cr.attempts[j]; a.Delivered && lab.Success(a.Status) && claimer < 0 {
			claimer = j
		}
	}
	if claimer < 0 {
		return nil
	}
	for _, j := range idx {
		a := cr.attempts[j]
		if j == claimer || !a.Delivered || a.Status != 409 || lab.SameRequest(a.Body, cr.attempts[claimer].Body) {
			continue
		}
		cr.note(fmt.Sprintf("a different request (%s) sent while %s held its key was answered 409, to wait; the contract says 422 whatever the first request's state: compare the fingerprint before the state", a.Lane, cr.attempts[claimer].Lane), claimer, j)
		break
	}
	return nil
}

// checkRefusals provokes the two business answers and retries each once
// the refusal's reason is gone: a 402, then a top-up; a 404 for a payee
// that does not exist, then the payee's account opened. The contract says
// both are stored under the key and replayed, so each retry must get the
// refusal again, byte for byte, and move nothing. An endpoint that stores
// only successes pays on the retry; one that renders the stored error again
// answers other bytes.
func checkRefusals(cr *checkRun) error {
	payer, err := cr.account("payer", 1_000) // less than any amount the grader sends
	if err != nil {
		return err
	}
	shop, err := cr.account("shop", 0)
	if err != nil {
		return err
	}
	cust := cr.customer("shop-1")
	in := cr.intent(cust, payer, shop, cr.amount())
	r := intentRequest(in, cr.key())
	first := cr.send(in, r)
	cr.expect(first, "a transfer larger than the payer's balance", 402)
	if err := cr.setBalance(payer, 5_000_000, "the payer's account is topped up: the retry must still get the stored 402"); err != nil {
		return err
	}
	retry := cr.send(in, r)
	cr.expectReplayHeader(first, retry)

	// The 404 story has a payer of its own, rich from the start, so that
	// its curl lines hold neither the 402 story's accounts nor its top-up.
	payer2, err := cr.account("payer-2", 5_000_000)
	if err != nil {
		return err
	}
	missing := cr.id("nobody")
	in2 := cr.intent(cust, payer2, missing, cr.amount())
	r2 := intentRequest(in2, cr.key())
	first2 := cr.send(in2, r2)
	cr.expect(first2, "a transfer to an account that does not exist", 404)
	if err := cr.setBalance(missing, 0, "the payee's account is opened: the retry must still get the stored 404"); err != nil {
		return err
	}
	retry2 := cr.send(in2, r2)
	cr.expectReplayHeader(first2, retry2)
	return nil
}

func checkMissingKey(cr *checkRun) error {
	payer, shop, err := cr.payerAndShop()
	if err != nil {
		return err
	}
	cust := cr.customer("shop-1")
	in := cr.intent(cust, payer, shop, cr.amount())
	body := lab.RenderBody(lab.StyleCompact, payer, shop, in.Amount)
	a1 := cr.send(in, post(cust, nil, body))
	a2 := cr.send(in, post(cust, nil, body)) // the client retries, still without a key
	for _, i := range []int{a1, a2} {
		if a := cr.attempts[i]; a.Delivered && a.Status != 400 {
			cr.note(fmt.Sprintf("a transfer without Idempotency-Key (%s) was answered %d %s; the contract says 400, because without a key no retry can be safe", a.Lane, a.Status, snippet(a.Response)), i)
			break
		}
	}
	noCustomer := cr.intent("", payer, shop, cr.amount())
	i := cr.send(noCustomer, post("", []string{lab.QuoteKey(cr.key())}, lab.RenderBody(lab.StyleCompact, payer, shop, noCustomer.Amount)))
	cr.expect(i, "a transfer without X-Customer-ID", 401)
	return nil
}

// checkRepaired sends two requests the contract refuses before anything
// is claimed, a body whose amount is a JSON string (400) and a transfer
// without X-Customer-ID (401), and then each repaired under the same key.
// The refusal stored nothing, so the repaired request is a new request and
// must be executed: 201 and one transfer. An endpoint (or a middleware)
// that stores every answer under its key hands the customer the 400 again,
// or a 422, and the transfer never happens.
func checkRepaired(cr *checkRun) error {
	payer, err := cr.account("payer", 5_000_000)
	if err != nil {
		return err
	}
	cust := cr.customer("shop-1")
	type story struct {
		what, said string
		in         lab.Intent
		bad, fixed int
	}
	var stories []story
	for _, s := range []struct {
		what, said string
		status     int
		bad        func(in lab.Intent, k string) Request
	}{
		{"a body whose amount is a JSON string", "its repaired body", 400, func(in lab.Intent, k string) Request {
			return keyed(in.Customer, k, fmt.Sprintf(`{"from":%q,"to":%q,"amount":"%d"}`, in.From, in.To, in.Amount))
		}},
		{"a transfer without X-Customer-ID", "the same transfer with X-Customer-ID", 401, func(in lab.Intent, k string) Request {
			return post("", []string{lab.QuoteKey(k)}, lab.RenderBody(lab.StyleCompact, in.From, in.To, in.Amount))
		}},
	} {
		shop, err := cr.account(fmt.Sprintf("shop-%d", len(stories)+1), 0)
		if err != nil {
			return err
		}
		in := cr.intent(cust, payer, shop, cr.amount())
		k := cr.key()
		bad := cr.send(in, s.bad(in, k))
		cr.expect(bad, s.what, s.status)
		fixed := cr.send(in, intentRequest(in, k))
		stories = append(stories, story{s.what, s.said, in, bad, fixed})
	}
	cr.afterJudge = append(cr.afterJudge, func(transfers map[string]int) {
		for _, s := range stories {
			b, f := cr.attempts[s.bad], cr.attempts[s.fixed]
			switch {
			case !b.Delivered || !f.Delivered || lab.Success(b.Status) || lab.Success(f.Status):
				continue // no answer (noted); the bad request paid (noted); a success the checker judges
			case transfers[s.in.ID] > 0:
				cr.expect(s.fixed, s.said+" under the same key", 201)
				continue
			case f.Status != b.Status && f.Status != 422:
				// Refused for a reason of its own, not the stored refusal.
				cr.expect(s.fixed, s.said+" under the same key", 201)
				continue
			}
			how := "answered"
			if string(f.Response) == string(b.Response) {
				how = "answered the refusal again,"
			}
			cr.fail(lab.RuleNoSilentWrong, lab.CauseStoredRefusal, fmt.Sprintf("%s (%s) was answered %d, and %s under the same key (%s) was %s %d %s and never paid: the refusal was kept under the key, so the customer's corrected request can never go through",
				s.what, b.Lane, b.Status, s.said, f.Lane, how, f.Status, snippet(f.Response)), s.bad, s.fixed)
		}
	})
	return nil
}

func checkMalformedKeys(cr *checkRun) error {
	payer, err := cr.account("payer", 5_000_000)
	if err != nil {
		return err
	}
	cust := cr.customer("shop-1")
	bad := []struct {
		name, why string
		header    []string
	}{
		{"token", "a bare token, not in double quotes", []string{cr.key()}},
		{"empty", "an empty string", []string{`""`}},
		{"long", "256 characters, over the limit of 255", []string{`"` + strings.Repeat("k", 256) + `"`}},
		{"non-ascii", "characters outside printable ASCII", []string{"\"cl\u00e9-" + cr.key() + "\""}},
		{"list", "two keys on one line", []string{lab.QuoteKey(cr.key()) + ", " + lab.QuoteKey(cr.key())}},
		{"two-lines", "two Idempotency-Key header lines", []string{lab.QuoteKey(cr.key()), lab.QuoteKey(cr.key())}},
		{"integer", "a number, not a string", []string{"42"}},
		{"parameter", "a string with a parameter", []string{lab.QuoteKey(cr.key()) + ";v=1"}},
	}
	for _, b := range bad {
		shop, err := cr.account("shop-"+b.name, 0)
		if err != nil {
			return err
		}
		in := cr.intent(cust, payer, shop, cr.amount())
		i := cr.send(in, post(cust, b.header, lab.RenderBody(lab.StyleCompact, payer, shop, in.Amount)))
		if a := cr.attempts[i]; a.Delivered && a.Status != 400 {
			moved := ""
			if lab.Success(a.Status) {
				moved = ", and money may have moved"
			}
			cr.note(fmt.Sprintf("a key that is %s (%s) was answered %d%s; the contract says 400 (RFC 8941 string of 1 to 255 printable ASCII characters)", b.why, a.Lane, a.Status, moved), i)
		}
	}
	return nil
}

// checkLongestKey sends a valid key of exactly 255 characters between the
// quotes (257 on the wire): a limit that counts the quotes refuses it.
func checkLongestKey(cr *checkRun) error {
	payer, shop, err := cr.payerAndShop()
	if err != nil {
		return err
	}
	cust := cr.customer("shop-1")
	k := cr.key() + "-"
	for i := 0; len(k) < 255; i++ {
		k += string("0123456789abcdefghijklmnopqrstuvwxyz"[i%36])
	}
	in := cr.intent(cust, payer, shop, cr.amount())
	r := intentRequest(in, k)
	first := cr.send(in, r)
	if a := cr.attempts[first]; a.Delivered && !lab.Success(a.Status) {
		cr.note(fmt.Sprintf("a valid key of exactly 255 characters (%s) was answered %d %s; the contract allows 1 to 255 characters between the quotes (a limit that counts the quotes, or the header's bytes, refuses it)",
			a.Lane, a.Status, snippet(a.Response)), first)
		return nil
	}
	retry := cr.send(in, r)
	cr.expectReplayHeader(first, retry)
	return nil
}

// checkOtherCustomer: two clients that number their keys the same way
// send the same key string, each for its own request; a third sends
// exactly the first one's body under it. Each is a new request of its own
// customer and must be executed, whatever an endpoint with global keys
// answers instead (422, 409, 417, a replay of someone else's answer).
func checkOtherCustomer(cr *checkRun) error {
	payerA, err := cr.account("payer-a", 5_000_000)
	if err != nil {
		return err
	}
	shopA, err := cr.account("shop-a", 0)
	if err != nil {
		return err
	}
	payerB, err := cr.account("payer-b", 5_000_000)
	if err != nil {
		return err
	}
	shopB, err := cr.account("shop-b", 0)
	if err != nil {
		return err
	}
	ca, cb, cc := cr.customer("shop-a"), cr.customer("shop-b"), cr.customer("shop-c")
	k := cr.g.run + "order-1"
	inA := cr.intent(ca, payerA, shopA, cr.amount())
	first := cr.send(inA, intentRequest(inA, k))
	cr.expect(first, "a new transfer", 201)
	inB := cr.intent(cb, payerB, shopB, cr.amount())
	b := cr.send(inB, intentRequest(inB, k))
	// A third customer sends exactly the first customer's body under the
	// same key: its own new transfer, never the first customer's answer.
	inC := cr.intent(cc, payerA, shopA, inA.Amount)
	c := cr.send(inC, intentRequest(inC, k))
	cr.afterJudge = append(cr.afterJudge, func(transfers map[string]int) {
		for _, x := range []struct {
			in lab.Intent
			i  int
		}{{inB, b}, {inC, c}} {
			a := cr.attempts[x.i]
			if transfers[x.in.ID] > 0 || !a.Delivered || lab.Success(a.Status) {
				continue // paid; or no answer (noted); or a success the checker judges
			}
			cr.fail(lab.RuleOwnResponses, lab.CauseGlobalKeys, fmt.Sprintf("customer %s's own new transfer under key %q was answered %d %s and never paid, because customer %s had used that key first: another customer's key must never stop a customer's own request",
				a.Customer, k, a.Status, snippet(a.Response), ca), first, x.i)
		}
	})
	return nil
}

func checkTogether(cr *checkRun) error {
	payer, err := cr.account("payer", 50_000_000)
	if err != nil {
		return err
	}
	cust := cr.customer("app-1")
	// Each round sends the same request eight times and, in the same
	// instant, a crowd of other transfers from the same app: a busy moment,
	// in which the first of the eight takes longest to finish, so that the
	// others arrive while it is still in progress.
	const rounds, width, crowd = 4, 8, 8
	for round := range rounds {
		shop, err := cr.account(fmt.Sprintf("shop-%d", round+1), 0)
		if err != nil {
			return err
		}
		in := cr.intent(cust, payer, shop, cr.amount())
		r := intentRequest(in, cr.key())
		var ins []lab.Intent
		var rs []Request
		for range width {
			ins, rs = append(ins, in), append(rs, r)
		}
		// The crowd pays one account the same amount, each under its own
		// key: its balance still counts the crowd's transfers.
		other, err := cr.account(fmt.Sprintf("crowd-%d", round+1), 0)
		if err != nil {
			return err
		}
		amount := cr.amount()
		for range crowd {
			o := cr.intent(cust, payer, other, amount)
			ins = append(ins, o)
			rs = append(rs, intentRequest(o, cr.key()))
		}
		cr.sendTogether(ins, rs)
		// One more, after they all finished: it must get the first answer.
		last := cr.send(in, r)
		cr.expect(last, "a retry after the simultaneous ones finished", 201)
	}
	return nil
}
