package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dunglas/httpsfv"

	"idemlab/internal/clip"
)

// Header is one response header. Responses keep headers as an ordered list
// so that a stored response replays byte for byte.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Request is one client attempt as the engine sees it.
type Request struct {
	Method string `json:"method"`
	// Path is the path below the level's mount point: "/transfers",
	// "/accounts/alice".
	Path string `json:"path"`
	// Customer is the X-Customer-ID header; HasCustomer is false when the
	// header was absent.
	Customer    string `json:"customer"`
	HasCustomer bool   `json:"has_customer"`
	// Key is the raw Idempotency-Key header value(s), as sent.
	Key  []string `json:"key,omitempty"`
	Body []byte   `json:"body"`
	// ContentType is the Content-Type header, empty when absent.
	ContentType string `json:"content_type,omitempty"`
	// Lane and Intent label the attempt in traces: the lane is this one
	// attempt, the intent is the user's one wish that several attempts serve.
	Lane   string `json:"lane,omitempty"`
	Intent string `json:"intent,omitempty"`
}

// Response is a complete answer. Replay stores exactly this value.
type Response struct {
	Status int      `json:"status"`
	Header []Header `json:"header"`
	Body   []byte   `json:"body"`
}

// Get returns the first value of the named header, or "".
func (r Response) Get(name string) string {
	for _, h := range r.Header {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// Limits on what clients send.
const (
	MaxKeyLen      = 255
	MaxCustomerLen = 64
	MaxAccountLen  = 64
	// MaxAmount is the largest amount I-JSON can carry exactly (2^53-1).
	MaxAmount = 1<<53 - 1
	// MaxBodyBytes is the largest request body accepted (64 KiB).
	MaxBodyBytes = 64 << 10
)

// ParseKey parses Idempotency-Key header values as an RFC 8941 Structured
// Field string item: a quoted string of 1 to 255 printable ASCII characters,
// with no parameters. Several header lines are joined as HTTP joins them,
// which makes a list, not an item, and is refused.
func ParseKey(values []string) (string, *Problem) {
	if len(values) == 0 {
		return "", CauseKeyMissing.Problem(`send Idempotency-Key: "<unique key>", for example a UUID in double quotes`)
	}
	item, err := httpsfv.UnmarshalItem(values)
	if err != nil {
		return "", CauseKeyMalformed.Problem(`the key must be one Structured Field string: printable ASCII in double quotes, e.g. Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`)
	}
	s, ok := item.Value.(string)
	if !ok {
		return "", CauseKeyMalformed.Problem(`the key must be a string in double quotes, e.g. Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`)
	}
	if len(item.Params.Names()) > 0 {
		return "", CauseKeyMalformed.Problem("the key must not carry parameters")
	}
	if len(s) < 1 || len(s) > MaxKeyLen {
		return "", CauseKeyMalformed.Problemf("the key must be 1 to %d characters long, got %d", MaxKeyLen, len(s))
	}
	return s, nil
}

// ParseCustomer checks the X-Customer-ID header: 1 to 64 visible ASCII
// characters, no spaces.
func ParseCustomer(v string, present bool) (string, *Problem) {
	if !present || v == "" {
		return "", CauseCustomerMissing.Problem("send X-Customer-ID: <your customer id>")
	}
	if len(v) > MaxCustomerLen || !visibleASCII(v) {
		return "", CauseCustomerMalformed.Problemf("the customer id must be 1 to %d visible ASCII characters without spaces", MaxCustomerLen)
	}
	return v, nil
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// ValidAccountID reports whether id can name an account: 1 to 64 letters,
// digits, '-', '_' or '.'.
func ValidAccountID(id string) bool {
	if len(id) < 1 || len(id) > MaxAccountLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// TransferBody is a validated transfer request.
type TransferBody struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Amount int64  `json:"amount"`
}

// ParseTransfer validates a transfer body: one flat JSON object with exactly
// the fields from, to and amount, valid UTF-8, no duplicate names (I-JSON,
// RFC 7493), and amount a positive whole number written as digits.
func ParseTransfer(body []byte) (TransferBody, *Problem) {
	var t TransferBody
	fields, p := parseFlatObject(body, "from", "to", "amount")
	if p != nil {
		return t, p
	}
	for _, name := range []string{"from", "to"} {
		v, ok := fields[name]
		if !ok {
			return t, CauseFieldInvalid.Problemf("%q is required", name)
		}
		s, isString := v.(string)
		if !isString {
			return t, CauseFieldInvalid.Problemf("%q must be a string account id", name)
		}
		if !ValidAccountID(s) {
			return t, CauseAccountInvalid.Problemf("%q must be 1 to %d letters, digits, '-', '_' or '.'", name, MaxAccountLen)
		}
		if name == "from" {
			t.From = s
		} else {
			t.To = s
		}
	}
	amount, ok := fields["amount"]
	if !ok {
		return t, CauseAmountInvalid.Problem(`"amount" is required`)
	}
	n, p := parseAmount(amount)
	if p != nil {
		return t, p
	}
	t.Amount = n
	if t.From == t.To {
		return t, CauseSameAccount.Problem(`"from" and "to" must differ`)
	}
	return t, nil
}

// ParseBalance validates an account body: {"balance": <whole number ≥ 0>}.
func ParseBalance(body []byte) (int64, *Problem) {
	fields, p := parseFlatObject(body, "balance")
	if p != nil {
		return 0, p
	}
	v, ok := fields["balance"]
	if !ok {
		return 0, CauseAmountInvalid.Problem(`"balance" is required`)
	}
	if num, isNum := v.(json.Number); isNum && string(num) == "0" {
		return 0, nil
	}
	n, p := parseAmount(v)
	if p != nil {
		p.Detail = strings.Replace(p.Detail, "amount", "balance", 1)
	}
	return n, p
}

func parseAmount(v any) (int64, *Problem) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, CauseAmountInvalid.Problem(`"amount" must be a JSON number, not a string`)
	}
	s := string(num)
	if s == "" || s[0] == '-' || s == "0" {
		return 0, CauseAmountInvalid.Problemf("amount must be greater than zero, got %s", clip.String(s, 40))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, CauseAmountInvalid.Problemf("amount must be a whole number of won written with digits only, got %s", clip.String(s, 40))
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > MaxAmount {
		return 0, CauseAmountInvalid.Problemf("amount must be at most %d", int64(MaxAmount))
	}
	return n, nil
}

// parseFlatObject reads one JSON object whose values are strings or numbers,
// with names from allowed only. Anything else is a problem.
func parseFlatObject(body []byte, allowed ...string) (map[string]any, *Problem) {
	if !utf8.Valid(body) {
		return nil, CauseBodyInvalid.Problem("the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, CauseBodyInvalid.Problem("the body must be a JSON object")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, CauseBodyInvalid.Problem("the body must be a JSON object")
	}
	fields := make(map[string]any, len(allowed))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, CauseBodyInvalid.Problem("the body is not valid JSON")
		}
		name, _ := tok.(string)
		if !contains(allowed, name) {
			return nil, CauseFieldInvalid.Problemf("unknown field %q (allowed: %s)", clip.String(name, 40), strings.Join(allowed, ", "))
		}
		if _, dup := fields[name]; dup {
			return nil, CauseBodyInvalid.Problemf("field %q appears twice", name)
		}
		tok, err = dec.Token()
		if err != nil {
			return nil, CauseBodyInvalid.Problem("the body is not valid JSON")
		}
		switch v := tok.(type) {
		case string, json.Number:
			fields[name] = v
		default:
			return nil, CauseFieldInvalid.Problemf("field %q must be a string or a number", name)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, CauseBodyInvalid.Problem("the body is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, CauseBodyInvalid.Problem("the body must hold exactly one JSON object")
	}
	return fields, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Canonical returns the RFC 8785 (JSON Canonicalization Scheme) form of
// the transfer: its members sorted by name, no whitespace. For a transfer
// ParseTransfer accepted the form is fixed by construction: account ids
// are letters, digits, '-', '_' and '.', which need no escaping, and the
// amount is a positive integer of at most 2^53-1, which RFC 8785 writes in
// plain digits. However the client wrote the body (any field order, any
// whitespace, letters escaped as \u0061), this is its canonical form;
// FuzzTransferCanonical holds it to an RFC 8785 library byte for byte, and
// TestFingerprintsMatchTheStoredOnes to the fingerprints idemlab stored when
// it canonicalized the body's text.
func (t TransferBody) Canonical() []byte {
	b := make([]byte, 0, len(`{"amount":,"from":"","to":""}`)+16+len(t.From)+len(t.To))
	b = append(b, `{"amount":`...)
	b = strconv.AppendInt(b, t.Amount, 10)
	b = append(b, `,"from":"`...)
	b = append(b, t.From...)
	b = append(b, `","to":"`...)
	b = append(b, t.To...)
	return append(b, `"}`...)
}

// Fingerprint is the one fingerprint function. Canonical: SHA-256 over the
// method, the route and the RFC 8785 canonical JSON of the transfer, so
// that reordered fields and whitespace are the same request. Raw: SHA-256
// over the same with the body bytes as sent. None: "". The transfer is
// what ParseTransfer made of body.
func Fingerprint(mode FingerprintMode, method, route string, body []byte, t TransferBody) string {
	var b []byte
	switch mode {
	case FingerprintNone:
		return ""
	case FingerprintCanonical:
		b = t.Canonical()
	default:
		b = body
	}
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{'\n'})
	h.Write([]byte(route))
	h.Write([]byte{'\n'})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
