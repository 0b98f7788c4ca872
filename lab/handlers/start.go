package handlers

import "strings"

// naiveKo is the naive rung's comments in Korean, line for line: Start
// puts each in place of the English line of naive.js it translates, so
// the Korean page starts from the same code, every statement on the same
// line (TestStartIsNaiveInEveryLanguage also fails on an English comment
// left without its Korean).
var naiveKo = map[string]string{
	"// naive: the first rung. The handler checks the request and moves the":       "// naive: 첫 단계. 핸들러는 요청을 검사하고 돈을 옮깁니다. 키는 전혀",
	"// money. It keeps no keys: every request is a new transfer, so a retry pays": "// 기억하지 않습니다. 그래서 모든 요청이 새 송금이 되고, 재시도는 한 번 더",
	"// again, simultaneous retries all pay, and a corrected amount pays too.":     "// 결제되며, 동시에 온 재시도는 모두 결제되고, 금액을 고친 요청도 결제됩니다.",
	"// The next rung (unique) remembers the key.":                                 "// 다음 단계(unique)에서 키를 기억하게 됩니다.",
	"// A handler that keeps keys says for how long, so that a client knows how":   "// 키를 보관하는 핸들러는 얼마 동안 보관하는지 밝혀서, 클라이언트가 언제까지",
	"// long a retry is safe: const retentionSeconds = N (rule 7). naive keeps":    "// 안전하게 재시도할 수 있는지 알게 합니다: const retentionSeconds = N",
	"// no key, so it says nothing yet.":                                           "// (규칙 7). naive는 키를 보관하지 않으니 아직 밝힐 것이 없습니다.",
	"// Check the request before anything happens (401, 415, 400).":                "// 무엇을 하든 그 전에 요청부터 검사합니다(401, 415, 400).",
	"// A transfer that cannot happen is answered without calling the network.":    "// 할 수 없는 송금에는 결제망을 부르지 않고 바로 답합니다.",
	"// Move the money in one transaction.":                                        "// 돈은 트랜잭션 하나 안에서 옮깁니다.",
}

// Start is the handler the lab page starts a student from: the naive
// rung, its comments in the page's language ("ko" for Korean, naiveKo).
func Start(lang string) ([]byte, error) {
	src, err := Source("naive")
	if err != nil || lang != "ko" {
		return src, err
	}
	lines := strings.Split(string(src), "\n")
	for i, l := range lines {
		c := strings.TrimSpace(l)
		if ko, ok := naiveKo[c]; ok && strings.HasPrefix(c, "//") {
			lines[i] = l[:len(l)-len(strings.TrimLeft(l, " \t"))] + ko
		}
	}
	return []byte(strings.Join(lines, "\n")), nil
}
