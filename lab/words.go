package lab

import "fmt"

// The words for money moved more than once. A wish should move its money
// once; every transfer after its first is an extra transfer, and idemlab
// counts those, not "twice" (a naive storm of forty clients moves one wish's
// money forty times: 39 extra transfers). They say "transfer" and "moved",
// never "payment": the payment network is the other party (the lab's pay,
// rule 8), and a student read "1 extra payment" as the network's charge. The same words are in web/strings.js (extraPayments and
// its keys), which the bench's summary, the race view's ledger and the
// classroom's tally use; server/words_browser_test.go holds the two to one
// sentence.
var extraPaymentWords = map[string]struct{ none, one, many string }{
	"en": {"no extra transfers", "1 extra transfer: %s won moved more than once", "%s extra transfers: %s won moved more than once"},
	"ko": {"추가 송금 없음", "추가 송금 1건: %s원이 중복 송금됨", "추가 송금 %s건: %s원이 중복 송금됨"},
}

// ExtraPayments says n transfers beyond each wish's first, which moved won
// in all, in lang ("ko"), else in English: "39 extra transfers: 390,000 won
// moved more than once".
func ExtraPayments(n int, won int64, lang string) string {
	w, ok := extraPaymentWords[lang]
	if !ok {
		w = extraPaymentWords["en"]
	}
	switch n {
	case 0:
		return w.none
	case 1:
		return fmt.Sprintf(w.one, GroupDigits(won))
	}
	return fmt.Sprintf(w.many, GroupDigits(int64(n)), GroupDigits(won))
}
