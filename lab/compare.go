// How two requests and two answers are compared, and how a body is shown
// in a violation's message.

package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"idemlab/engine"
)

// AnswerDifference says outright how a retry's answer differs from the
// first one: the status first ("status 200 against the first answer's 201"), then the
// members of a JSON body whose values differ, or the first byte at which
// two bodies part.
func AnswerDifference(firstStatus int, first []byte, status int, body []byte) string {
	return answerDifference(diffWordsEn, firstStatus, first, status, body)
}

// diffWords are AnswerDifference's sentences in one language.
type diffWords struct {
	status, none, join, added, missing, changed, sameMembers, emptyBody, partAt string
	// long names a value too long to quote whole in a sentence.
	long string
	// statusMember names a body member called "status", which a sentence
	// that also says "status 409 against the first answer's 200" must not let pass for
	// the HTTP status.
	statusMember string
	// typeChanged, typeMissing and typeAdded say how the Content-Type
	// of a replay differs from the first answer's.
	typeChanged, typeMissing, typeAdded string
}

var (
	diffWordsEn = diffWords{
		status:      "status %d against the first answer's %d",
		none:        "no difference",
		join:        "; ",
		added:       "%s is %s, absent from the first answer",
		missing:     "%s is missing, the first answer had %s",
		changed:     "%s is %s against the first answer's %s",
		sameMembers: "the same JSON members written with other bytes (order or spacing): a replay sends the stored bytes",
		emptyBody:   "an empty body against the first answer's %s",
		partAt:      "the bodies part at byte %d: %s here, %s in the first answer",
		long:        "a value of %d bytes",

		statusMember: `the body member "status"`,

		typeChanged: "Content-Type %q against the first answer's %q",
		typeMissing: "no Content-Type, where the first answer had %q",
		typeAdded:   "Content-Type %q, where the first answer had none",
	}
	diffWordsKo = diffWords{
		status:      "상태 %d(첫 응답: %d)",
		none:        "차이 없음",
		join:        "; ",
		added:       "%s 값이 %s입니다(첫 응답에는 없음)",
		missing:     "%s 값이 없습니다(첫 응답: %s)",
		changed:     "%s 값이 %s입니다(첫 응답: %s)",
		sameMembers: "JSON 멤버는 같지만 바이트가 다릅니다(순서나 공백): 재생은 저장된 바이트를 그대로 보냅니다",
		emptyBody:   "본문이 비어 있습니다(첫 응답: %s)",
		partAt:      "본문이 %d번째 바이트에서 갈립니다: 여기는 %s, 첫 응답은 %s",
		long:        "%d바이트짜리 값",

		statusMember: `본문 멤버 "status"`,

		typeChanged: "Content-Type이 %q입니다(첫 응답: %q)",
		typeMissing: "Content-Type이 없습니다(첫 응답: %q)",
		typeAdded:   "Content-Type이 %q입니다(첫 응답에는 없음)",
	}
)

// SameContentType reports whether two answers' Content-Type headers are
// the same. Media types and the charset are case-insensitive (RFC 9110
// §8.3.1), so case alone is no difference; anything else is.
func SameContentType(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

// replayDifference says how a retry's answer (status, body, Content-Type)
// differs from the first: rule 3's "byte for byte" covers all three.
func replayDifference(w diffWords, first, retry Attempt) string {
	var parts []string
	if first.Status != retry.Status || !bytes.Equal(first.Response, retry.Response) {
		parts = append(parts, answerDifference(w, first.Status, first.Response, retry.Status, retry.Response))
	}
	if !SameContentType(first.ContentType, retry.ContentType) {
		switch was, now := strings.TrimSpace(first.ContentType), strings.TrimSpace(retry.ContentType); {
		case now == "":
			parts = append(parts, fmt.Sprintf(w.typeMissing, was))
		case was == "":
			parts = append(parts, fmt.Sprintf(w.typeAdded, now))
		default:
			parts = append(parts, fmt.Sprintf(w.typeChanged, now, was))
		}
	}
	if len(parts) == 0 {
		return w.none
	}
	return strings.Join(parts, w.join)
}

func answerDifference(w diffWords, firstStatus int, first []byte, status int, body []byte) string {
	var parts []string
	if status != firstStatus {
		parts = append(parts, fmt.Sprintf(w.status, status, firstStatus))
	}
	if !bytes.Equal(first, body) {
		parts = append(parts, bodyDifference(w, first, body))
	}
	if len(parts) == 0 {
		return w.none
	}
	return strings.Join(parts, w.join)
}

func bodyDifference(w diffWords, first, body []byte) string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(first, &a) == nil && json.Unmarshal(body, &b) == nil {
		var names []string
		for k := range a {
			names = append(names, k)
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		var diffs []string
		for _, k := range names {
			va, ina := a[k]
			vb, inb := b[k]
			name := fmt.Sprintf("%q", k)
			if k == "status" {
				name = w.statusMember
			}
			switch {
			case !ina:
				diffs = append(diffs, fmt.Sprintf(w.added, name, clip(w, vb)))
			case !inb:
				diffs = append(diffs, fmt.Sprintf(w.missing, name, clip(w, va)))
			case !bytes.Equal(compactBytes(va), compactBytes(vb)):
				diffs = append(diffs, fmt.Sprintf(w.changed, name, clip(w, vb), clip(w, va)))
			}
		}
		if len(diffs) > 0 {
			return strings.Join(diffs, ", ")
		}
		return w.sameMembers
	}
	if len(body) == 0 {
		return fmt.Sprintf(w.emptyBody, compact(first))
	}
	n := 0
	for n < len(first) && n < len(body) && first[n] == body[n] {
		n++
	}
	return fmt.Sprintf(w.partAt, n, clip(w, tail(body, n)), clip(w, tail(first, n)))
}

func compactBytes(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

func tail(b []byte, n int) []byte {
	if n >= len(b) {
		return nil
	}
	return b[n:]
}

// clip quotes a value for a sentence: whole, or, when it is too long to
// read there, by its length. A sentence never shows a value cut short.
func clip(w diffWords, b []byte) string {
	s := string(compactBytes(b))
	if utf8.RuneCountInString(s) > 80 {
		return fmt.Sprintf(w.long, len(s))
	}
	if s == "" {
		return "(nothing)"
	}
	return s
}

// SameRequest compares two transfer bodies as the canonical fingerprint
// does: reordered fields and whitespace are the same request. Bodies the
// bank API refuses are the same only byte for byte.
func SameRequest(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ta, pa := engine.ParseTransfer(a)
	tb, pb := engine.ParseTransfer(b)
	return pa == nil && pb == nil && ta == tb // equal transfers, equal canonical forms
}

// compact quotes a body for a sentence: its JSON on one line, or, when
// that is too long to read there, the names of its members (values are
// never cut short: a reader would take the cut for the body).
func compact(b []byte) string {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		out.Reset()
		out.Write(b)
	}
	s := strings.TrimSpace(out.String())
	if s == "" {
		return "(no body)"
	}
	if utf8.RuneCountInString(s) <= 160 {
		return s
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(b, &members) == nil {
		names := make([]string, 0, len(members))
		for k := range members {
			names = append(names, k)
		}
		sort.Strings(names)
		return "{" + strings.Join(names, ", ") + "}"
	}
	return fmt.Sprintf("(%d bytes)", len(s))
}
