package classroom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"idemlab/engine"
	"idemlab/internal/clip"
)

// Limits on what a browser may send over the room's websocket.
const (
	// MaxMessageBytes is the read limit of every connection: the largest
	// message a client may send. The biggest legitimate one, a storm, is a
	// few hundred bytes.
	MaxMessageBytes = 2048
	// MaxNicknameRunes bounds a nickname so that a projector line stays a line.
	MaxNicknameRunes = 24
	// MaxStormClients is the most simulated clients a storm may fire.
	MaxStormClients = 1000
	// MaxStormAttempts is the most attempts each storm client sends.
	MaxStormAttempts = 5
	// MaxSlowMotion is the longest pause before each phase in slow motion.
	MaxSlowMotion = 2000
	// MaxLatency is the longest simulated payment call a storm may ask for.
	MaxLatency = 3000
	// MaxClassSize is the largest class size the presenter may set: the
	// connections one room holds at most.
	MaxClassSize = 1500
)

// Message types a client may send. Students may send only join, send and
// vote; the rest control the room and are the instructor's.
const (
	MsgJoin   = "join"   // a student names themself (first message of a phone)
	MsgSend   = "send"   // a student presses "Send transfer"
	MsgVote   = "vote"   // a student predicts the second retry's answer
	MsgLevel  = "level"  // the instructor switches the room's level (fresh ledger)
	MsgReset  = "reset"  // the instructor starts a fresh ledger at the same level
	MsgStorm  = "storm"  // the instructor fires a storm
	MsgAsk    = "ask"    // the instructor opens the prediction vote (for the next storm, at level)
	MsgReveal = "reveal" // the instructor shows the vote's histogram now
	MsgKick   = "kick"   // the instructor removes a student from the room
	MsgLock   = "lock"   // the instructor closes the room to new students
	MsgUnlock = "unlock" // the instructor opens it again
	MsgSize   = "size"   // the instructor sets how many students the room admits
)

// instructorOnly lists the message types that control the room.
var instructorOnly = map[string]bool{MsgLevel: true, MsgReset: true, MsgStorm: true, MsgAsk: true, MsgReveal: true,
	MsgKick: true, MsgLock: true, MsgUnlock: true, MsgSize: true}

// Vote choices: what the second retry can get.
const (
	ChoiceDouble    = "double" // a second transfer: charged twice
	Choice201       = "201"    // the first answer again: charged once
	Choice200       = "200"    // "already processed", with no transfer in it
	Choice409       = "409"    // the first attempt is still in progress
	Choice422       = "422"    // the key was used for another request
	ChoiceNoAnswer  = "none"   // no answer came back
	choiceUndecided = ""
)

// Choices returns every vote answer in the order the phones show them, a
// fresh copy for each caller.
func Choices() []string { return slices.Clone(choices) }

var choices = []string{ChoiceDouble, Choice201, Choice200, Choice409, Choice422, ChoiceNoAnswer}

// ChoicesFor is the vote's answers at a level: the ones its server can
// give, plus "charged twice" and "no answer", which every level can.
// naive has no key to refuse with; unique answers a retry with a generic
// 200; fingerprint adds 422; in-progress 409; replay and scoped give the
// first answer again (201).
func ChoicesFor(level string) []string {
	p, ok := engine.Preset(level)
	if !ok || p.Claim == engine.ClaimNone {
		return []string{ChoiceDouble, Choice201, ChoiceNoAnswer}
	}
	out := []string{ChoiceDouble}
	if p.Replay == engine.ReplayStored {
		out = append(out, Choice201)
	} else {
		out = append(out, Choice200)
	}
	if p.InProgress == engine.InProgressTwoPhase {
		out = append(out, Choice409)
	}
	if p.Fingerprint != engine.FingerprintNone {
		out = append(out, Choice422)
	}
	return append(out, ChoiceNoAnswer)
}

// Storm faults, as the instructor's form names them.
const (
	FaultNone          = "none"
	FaultClientTimeout = "client-timeout" // the gateway gives up before the server finishes
	FaultLoseResponse  = "lose-response"  // the load balancer cuts the answer
	FaultCrash         = "crash"          // the process dies before a phase
	FaultLateRetry     = "late-retry"     // the retry comes after the retention
)

// StormFaults returns the faults a storm may inject, a fresh copy for each
// caller.
func StormFaults() []string { return slices.Clone(stormFaults) }

var stormFaults = []string{FaultNone, FaultClientTimeout, FaultLoseResponse, FaultCrash, FaultLateRetry}

// StormSpec is what the instructor asks for: Clients simulated clients fire
// at once, sharing Keys keys (one intent each); each client sends Attempts
// requests one after the other, the first of which suffers Fault at Phase.
type StormSpec struct {
	Level    string       `json:"level"`
	Clients  int          `json:"clients"`
	Keys     int          `json:"keys"`
	Attempts int          `json:"attempts"`
	Fault    string       `json:"fault"`
	Phase    engine.Phase `json:"phase,omitempty"`
	// ChangeAmount makes every retry carry a corrected amount under the
	// same key: the teller's mistake that fingerprints catch with 422.
	ChangeAmount bool `json:"change_amount,omitempty"`
	// SlowMS pauses before every phase of every request (slow motion).
	SlowMS int `json:"slow_ms,omitempty"`
	// LatencyMS is the payment-network call inside execution.
	LatencyMS int `json:"latency_ms,omitempty"`
}

// ClientMessage is one validated message from a browser.
type ClientMessage struct {
	Type     string     `json:"type"`
	Nickname string     `json:"nickname,omitempty"`
	Secret   string     `json:"secret,omitempty"`
	Basement bool       `json:"basement,omitempty"`
	Choice   string     `json:"choice,omitempty"`
	Level    string     `json:"level,omitempty"`
	Storm    *StormSpec `json:"storm,omitempty"`
	Student  string     `json:"student,omitempty"`
	Size     int        `json:"size,omitempty"`
}

// ErrBadMessage is wrapped by every error DecodeClientMessage returns.
var ErrBadMessage = errors.New("classroom: bad message")

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadMessage, fmt.Sprintf(format, args...))
}

// DecodeClientMessage parses and validates one websocket message from a
// browser. It accepts exactly one JSON object of a known type with only the
// fields that type uses, each within its limits, and normalises the
// nickname. Whatever the input, it returns a valid message or an error
// wrapping ErrBadMessage; it never panics.
func DecodeClientMessage(b []byte) (ClientMessage, error) {
	var m ClientMessage
	if len(b) > MaxMessageBytes {
		return m, bad("a message is at most %d bytes", MaxMessageBytes)
	}
	if !utf8.Valid(b) {
		return m, bad("a message is UTF-8 JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return ClientMessage{}, bad("not a message object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return ClientMessage{}, bad("one JSON object per message")
	}
	fields := map[string]bool{}
	if m.Nickname != "" {
		fields["nickname"] = true
	}
	if m.Secret != "" {
		fields["secret"] = true
	}
	if m.Basement {
		fields["basement"] = true
	}
	if m.Choice != "" {
		fields["choice"] = true
	}
	if m.Level != "" {
		fields["level"] = true
	}
	if m.Storm != nil {
		fields["storm"] = true
	}
	if m.Student != "" {
		fields["student"] = true
	}
	if m.Size != 0 {
		fields["size"] = true
	}
	allowed := map[string][]string{
		MsgJoin: {"nickname", "secret"}, MsgSend: {"basement"}, MsgVote: {"choice"}, MsgLevel: {"level"},
		MsgReset: nil, MsgStorm: {"storm"}, MsgAsk: {"level"}, MsgReveal: nil,
		MsgKick: {"student"}, MsgLock: nil, MsgUnlock: nil, MsgSize: {"size"},
	}
	want, ok := allowed[m.Type]
	if !ok {
		return ClientMessage{}, bad("unknown message type %q", clip.String(m.Type, 20))
	}
	for f := range fields {
		if !slices.Contains(want, f) {
			return ClientMessage{}, bad("a %s message has no %s", m.Type, f)
		}
	}
	var err error
	switch m.Type {
	case MsgJoin:
		if m.Nickname, err = CleanNickname(m.Nickname); err != nil {
			return ClientMessage{}, err
		}
		if !validSecret(m.Secret) {
			return ClientMessage{}, bad("the secret is 32 to 128 lowercase hex digits")
		}
	case MsgVote:
		if !slices.Contains(choices, m.Choice) {
			return ClientMessage{}, bad("a vote is one of %v", choices)
		}
	case MsgLevel, MsgAsk:
		if (m.Type == MsgLevel || m.Level != "") && !slices.Contains(engine.Levels(), m.Level) {
			return ClientMessage{}, bad("a level is one of %v", engine.Levels())
		}
	case MsgSize:
		if m.Size < 1 || m.Size > MaxClassSize {
			return ClientMessage{}, bad("a class size is 1 to %d students", MaxClassSize)
		}
	case MsgKick:
		if !validStudentID(m.Student) {
			return ClientMessage{}, bad("a kick names a student id (s1, s2, …)")
		}
	case MsgStorm:
		if m.Storm == nil {
			return ClientMessage{}, bad("a storm message needs a storm")
		}
		if err := m.Storm.validate(); err != nil {
			return ClientMessage{}, err
		}
	}
	return m, nil
}

func (s *StormSpec) validate() error {
	if !slices.Contains(engine.Levels(), s.Level) {
		return bad("a level is one of %v", engine.Levels())
	}
	if s.Clients < 1 || s.Clients > MaxStormClients {
		return bad("a storm has 1 to %d clients", MaxStormClients)
	}
	if s.Keys == 0 {
		s.Keys = 1
	}
	if s.Keys < 1 || s.Keys > s.Clients {
		return bad("a storm has 1 to %d keys (no more than its clients)", s.Clients)
	}
	if s.Attempts == 0 {
		s.Attempts = 2
	}
	if s.Attempts < 1 || s.Attempts > MaxStormAttempts {
		return bad("each client sends 1 to %d attempts", MaxStormAttempts)
	}
	if s.Fault == "" {
		s.Fault = FaultNone
	}
	if !slices.Contains(stormFaults, s.Fault) {
		return bad("a fault is one of %v", stormFaults)
	}
	switch s.Fault {
	case FaultCrash, FaultClientTimeout:
		if s.Phase == "" {
			s.Phase = engine.PhaseExecute
		}
		if !slices.Contains(engine.Phases(), s.Phase) {
			return bad("a phase is one of %v", engine.Phases())
		}
	default:
		if s.Phase != "" {
			return bad("only a crash or a client timeout strikes at a phase")
		}
	}
	if s.SlowMS < 0 || s.SlowMS > MaxSlowMotion {
		return bad("slow motion is 0 to %d ms per phase", MaxSlowMotion)
	}
	if s.LatencyMS < 0 || s.LatencyMS > MaxLatency {
		return bad("the payment call takes 0 to %d ms", MaxLatency)
	}
	return nil
}

// CleanNickname trims a nickname and checks it: 1 to MaxNicknameRunes
// printable characters. It is shown as text everywhere, never as markup,
// so it needs no escaping; control and formatting characters are refused
// because they can reorder or hide the text around them.
func CleanNickname(s string) (string, error) {
	s = strings.TrimSpace(s)
	n := utf8.RuneCountInString(s)
	if n < 1 || n > MaxNicknameRunes {
		return "", bad("a nickname is 1 to %d characters", MaxNicknameRunes)
	}
	visible := false
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' || unicode.Is(unicode.Cf, r) {
			return "", bad("a nickname has letters, digits, punctuation and spaces only")
		}
		if !blankLooking(r) {
			visible = true
		}
	}
	if !visible {
		return "", bad("a nickname needs at least one visible character")
	}
	return s, nil
}

// blankLooking reports whether r draws as nothing, or as an empty box, in
// the fonts phones and projectors use: spaces of every width, and the
// fillers and blank patterns that Unicode counts as letters or symbols
// (Hangul fillers U+115F, U+1160, U+3164, U+FFA0; the blank Braille
// pattern U+2800; Khmer's inherent vowels U+17B4, U+17B5), which is how a
// nickname made of them looks like no name at all on the projector.
func blankLooking(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x17B4, 0x17B5, 0x180E, 0x2028, 0x2029:
		return true
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Zs, r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)
}

func validStudentID(s string) bool {
	if len(s) < 2 || len(s) > 8 || s[0] != 's' || s[1] == '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func validSecret(s string) bool {
	if len(s) < 32 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
