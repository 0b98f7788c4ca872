package lab

import "fmt"

// The words for money paid more than once. A wish should be paid once; every
// payment after its first is an extra payment, and idemlab counts those, not
// "twice" (a naive storm of forty clients pays one wish forty times: 39
// extra payments). The same words are in web/strings.js (extraPayments and
// its keys), which the bench's summary, the race view's ledger and the
// classroom's tally use; server/words_browser_test.go holds the two to one
// sentence.
var extraPaymentWords = map[string]struct{ none, one, many string }{
	"en": {"no extra payments", "1 extra payment: %s won paid more than once", "%s extra payments: %s won paid more than once"},
	"ko": {"추가 결제 없음", "추가 결제 1건: %s원이 중복 지급됨", "추가 결제 %s건: %s원이 중복 지급됨"},
}

// ExtraPayments says n payments beyond each wish's first, which moved won in
// all, in lang ("ko"), else in English: "39 extra payments: 390,000 won paid
// more than once".
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
