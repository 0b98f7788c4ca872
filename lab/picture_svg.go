package lab

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pictureWords are the few words a picture writes, per language. A word
// missing from a language falls back to English.
var pictureWords = map[string]map[string]string{
	"en": {
		"title":       "The day as a picture",
		"title-short": "The storm as a picture",
		"attempts":    "%s attempts",
		"attempts-1":  "%s attempt",
		"axis":        "attempts",
		"column":      "a column is %s",
		"paid-twice":  "moved more than once: %s won",
		"causes":      "Causes of loss",
		"holds":       "Every rule holds: no money lost.",
		"times":       "broken %s times",
		"once":        "broken once",
		"won":         "%s won",
		"more":        "+ %d more broken rules",
		"rule":        "rule %d",
		"ms":          "%s ms", "s": "%s s", "min": "%s min", "h": "%s h",
		string(OutcomePaidOnce):  "paid once",
		string(OutcomePaidAgain): "paid again",
		string(OutcomeConflict):  "409 in progress",
		string(OutcomeMismatch):  "422 other request",
		string(OutcomeReplayed):  "replayed",
		string(OutcomeLost):      "answer lost",
		string(OutcomeRefused):   "refused (4xx)",
		string(OutcomeOther):     "other (5xx)",
	},
	// ko uses the words of the Korean lessons and page (송금, 중복, 재생,
	// 더 나간 돈, 응답 유실); the money line says what lab.ExtraPayments
	// says of the same won.
	"ko": {
		"title":       "하루를 한 장의 그림으로",
		"title-short": "재시도 폭풍을 한 장의 그림으로",
		"attempts":    "시도 %s개",
		"attempts-1":  "시도 %s개",
		"axis":        "시도",
		"column":      "막대 하나는 %s",
		"paid-twice":  "더 나간 돈: %s원",
		"causes":      "손실의 원인",
		"holds":       "모든 규칙이 지켜집니다: 잃은 돈이 없습니다.",
		"times":       "%s번 위반",
		"once":        "1번 위반",
		"won":         "%s원",
		"more":        "깨진 규칙 %d개 더",
		"rule":        "규칙 %d",
		"ms":          "%sms", "s": "%s초", "min": "%s분", "h": "%s시간",
		string(OutcomePaidOnce):  "한 번 송금",
		string(OutcomePaidAgain): "다시 송금 (중복)",
		string(OutcomeConflict):  "409 처리 중",
		string(OutcomeMismatch):  "422 다른 요청",
		string(OutcomeReplayed):  "재생",
		string(OutcomeLost):      "응답 유실",
		string(OutcomeRefused):   "거절 (4xx)",
		string(OutcomeOther):     "기타 (5xx)",
	},
}

// outcomeStyle is how an outcome is drawn: a colour and, on it, a pattern
// of its own, so that colour is never the only signal.
type outcomeStyle struct {
	fill  string
	marks string // the pattern's marks on an 8×8 tile
}

var outcomeStyles = map[Outcome]outcomeStyle{
	OutcomePaidOnce:  {"#2e7d32", ""}, // solid
	OutcomePaidAgain: {"#c62828", `<path d="M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4" stroke="#fff" stroke-width="1.8"/>`},
	OutcomeConflict:  {"#f0a000", `<circle cx="2" cy="2" r="1.4" fill="#3b2600"/><circle cx="6" cy="6" r="1.4" fill="#3b2600"/>`},
	OutcomeMismatch:  {"#6a1b9a", `<path d="M0,0 l8,8 M8,0 l-8,8" stroke="#fff" stroke-width="1.2"/>`},
	OutcomeReplayed:  {"#1565c0", `<path d="M0,2 h8 M0,6 h8" stroke="#fff" stroke-width="1.2"/>`},
	OutcomeLost:      {"#9e9e9e", `<path d="M2,0 v8 M6,0 v8" stroke="#212121" stroke-width="1.2" stroke-dasharray="2 2"/>`},
	OutcomeRefused:   {"#8d6e63", `<path d="M-2,6 l4,4 M0,0 l8,8 M6,-2 l4,4" stroke="#fff" stroke-width="1.4"/>`},
	OutcomeOther:     {"#37474f", `<path d="M4,1 v6 M1,4 h6" stroke="#fff" stroke-width="1.2"/>`},
}

// The picture's frame, in viewBox units.
const (
	svgW, svgH       = 960, 400
	plotX0, plotX1   = 76.0, 712.0
	plotY0, plotY1   = 58.0, 288.0
	legendX, legendY = 732.0, 64.0
	causesY          = 326.0
)

// SVG draws the picture as a self-contained SVG document (no scripts, no
// links, no fonts of its own): stacked columns of attempts by outcome over
// the clock, each outcome with its colour, pattern and word in a legend;
// the money moved more than once as a line with its final sum in words; and the
// causes of loss. Every column is a <g> with data-bucket, data-from-ms,
// data-to-ms, data-attempts and data-paid-twice, and each of its rects
// carries data-outcome and data-count, so that a page can make a column
// open its attempts. lang "ko" writes Korean; any other, English.
func (p Picture) SVG(lang string) []byte {
	words := pictureWords["en"]
	if lang != "ko" {
		lang = "en"
	}
	say := func(key string, args ...any) string {
		f, ok := pictureWords[lang][key]
		if !ok {
			f = words[key]
		}
		if len(args) == 0 {
			return f
		}
		return fmt.Sprintf(f, args...)
	}
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	attempts := p.Totals.Sum()
	heading := say("title")
	if p.SpanMS < 60*60*1000 {
		heading = say("title-short") // a storm, or a morning's rush
	}
	title := heading + " · " + attemptsWord(say, attempts) + " · " + say("paid-twice", GroupDigits(p.PaidTwice))
	w(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="picture-title" lang="%s" font-family="system-ui, -apple-system, 'Segoe UI', 'Noto Sans KR', sans-serif" data-step-ms="%d" data-span-ms="%d">`+"\n",
		svgW, svgH, svgW, svgH, lang, p.StepMS, p.SpanMS)
	w("<title id=\"picture-title\">%s</title>\n", esc(title))
	w("<defs>\n")
	for _, o := range Outcomes {
		st := outcomeStyles[o]
		w(`<pattern id="o-%s" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="%s"/>%s</pattern>`+"\n", o, st.fill, st.marks)
	}
	w("</defs>\n")
	w(`<rect width="%d" height="%d" fill="#fff"/>`+"\n", svgW, svgH)
	w(`<text x="24" y="32" font-size="20" font-weight="700" fill="#111">%s</text>`+"\n", esc(heading))
	w(`<text x="%g" y="32" font-size="14" fill="#333" text-anchor="end">%s · %s</text>`+"\n", plotX1,
		esc(attemptsWord(say, attempts)), esc(say("column", p.duration(p.StepMS, say))))

	// The axes: attempts on the left, the clock below.
	maxN := 0
	for _, bk := range p.Buckets {
		maxN = max(maxN, bk.Attempts)
	}
	top := niceCeil(int64(max(maxN, 1)))
	plotH := plotY1 - plotY0
	yOf := func(n float64) float64 { return plotY1 - n/float64(top)*plotH }
	w(`<g data-axis="attempts" font-size="13" fill="#333" text-anchor="end">`)
	for _, v := range []int64{0, top / 2, top} {
		if v == top/2 && top%2 != 0 {
			continue
		}
		y := yOf(float64(v))
		w(`<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, plotX0, plotX1, y, y)
		w(`<text x="%g" y="%.1f">%s</text>`, plotX0-6, y+4, GroupDigits(v))
	}
	w(`<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, (plotY0+plotY1)/2, esc(say("axis")))
	w("</g>\n")
	n := len(p.Buckets)
	cw := (plotX1 - plotX0) / float64(max(n, 1))
	tick := p.tickMS()
	w(`<g data-axis="clock" font-size="13" fill="#333" text-anchor="middle">`)
	w(`<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="#555"/>`, plotX0, plotX1, plotY1, plotY1)
	for ms := int64(0); ms <= p.SpanMS; ms += tick {
		x := plotX0 + float64(ms)/float64(max(p.SpanMS, 1))*(plotX1-plotX0)
		w(`<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#555"/>`, x, x, plotY1, plotY1+5)
		w(`<text x="%.1f" y="%g">%s</text>`, x, plotY1+20, esc(p.clockLabel(ms, say)))
	}
	w("</g>\n")

	// The columns.
	w(`<g data-series="attempts">` + "\n")
	for i, bk := range p.Buckets {
		x := plotX0 + float64(i)*cw
		w(`<g data-bucket="%d" data-from-ms="%d" data-to-ms="%d" data-attempts="%d" data-paid-twice="%d">`,
			bk.N, bk.FromMS, bk.ToMS, bk.Attempts, bk.PaidTwice)
		w("<title>%s</title>", esc(p.columnTitle(bk, say)))
		// A clear target the height of the plot, so a thin column is easy
		// to hit.
		w(`<rect x="%.2f" y="%g" width="%.2f" height="%g" fill="#fff" fill-opacity="0"/>`, x, plotY0, cw, plotH)
		y := plotY1
		for _, o := range Outcomes {
			c := bk.Counts.Of(o)
			if c == 0 {
				continue
			}
			h := max(1.5, float64(c)/float64(top)*plotH)
			y -= h
			w(`<rect data-outcome="%s" data-count="%d" x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="url(#o-%s)"/>`,
				o, c, x+cw*0.1, y, cw*0.8, h, o)
		}
		w("</g>\n")
	}
	w("</g>\n")

	// The money moved more than once, as a step line on a scale of its own.
	moneyTop := max(p.PaidTwice, 1)
	yMoney := func(v int64) float64 { return plotY1 - float64(v)/float64(moneyTop)*(plotH-6) }
	var pts []string
	prev := int64(0)
	pts = append(pts, fmt.Sprintf("%g,%.1f", plotX0, yMoney(0)))
	for i, bk := range p.Buckets {
		if bk.PaidTwice != prev {
			x := plotX0 + (float64(i)+0.5)*cw
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, yMoney(prev)), fmt.Sprintf("%.1f,%.1f", x, yMoney(bk.PaidTwice)))
			prev = bk.PaidTwice
		}
	}
	pts = append(pts, fmt.Sprintf("%g,%.1f", plotX1, yMoney(prev)))
	line := strings.Join(pts, " ")
	w(`<g data-series="paid-twice" data-won="%d">`, p.PaidTwice)
	w(`<polyline points="%s" fill="none" stroke="#fff" stroke-width="6" stroke-linejoin="round"/>`, line)
	w(`<polyline points="%s" fill="none" stroke="#111" stroke-width="3" stroke-linejoin="round"/>`, line)
	w(`<circle cx="%g" cy="%.1f" r="4.5" fill="#111" stroke="#fff" stroke-width="2"/>`, plotX1, yMoney(prev))
	w("</g>\n")

	// The legend: colour, pattern and word, with the day's count.
	w(`<g data-legend="outcomes" font-size="14" fill="#111">` + "\n")
	for i, o := range Outcomes {
		y := legendY + float64(i)*22
		w(`<g data-legend="%s"><rect x="%g" y="%g" width="22" height="15" fill="url(#o-%s)" stroke="#333" stroke-width="0.5"/>`, o, legendX, y, o)
		w(`<text x="%g" y="%g">%s · %s</text></g>`+"\n", legendX+30, y+12.5, esc(say(string(o))), GroupDigits(int64(p.Totals.Of(o))))
	}
	y := legendY + float64(len(Outcomes))*22 + 14
	w(`<g data-legend="paid-twice"><line x1="%g" x2="%g" y1="%g" y2="%g" stroke="#111" stroke-width="3"/>`, legendX, legendX+22, y, y)
	// The sum in words, on two lines so that a large one fits: "paid
	// more than once:" then "1,230,000 won".
	label, sum, _ := strings.Cut(say("paid-twice", GroupDigits(p.PaidTwice)), ": ")
	w(`<text x="%g" y="%g" font-size="15" font-weight="700"><tspan>%s: </tspan><tspan x="%g" dy="20">%s</tspan></text></g>`+"\n",
		legendX+30, y+5, esc(label), legendX+30, esc(sum))
	w("</g>\n")

	// The causes of loss: at most three lines.
	w(`<g data-list="causes" font-size="14" fill="#111">`)
	w(`<text x="24" y="%g" font-weight="700">%s</text>`, causesY, esc(say("causes")))
	if len(p.Causes) == 0 {
		w(`<text x="24" y="%g">%s</text>`, causesY+21, esc(say("holds")))
	}
	const shown = 3
	for i, c := range p.Causes {
		y := causesY + 21*float64(i+1)
		if i == shown-1 && len(p.Causes) > shown {
			w(`<text x="24" y="%g">%s</text>`, y, esc(say("more", len(p.Causes)-i)))
			break
		}
		title := c.Rule.TitleIn(lang)
		times := say("times", GroupDigits(int64(c.Violations)))
		if c.Violations == 1 {
			times = say("once")
		}
		text := say("rule", c.Rule.N) + " · " + title + " · " + times
		if c.WonKnown && c.Won > 0 {
			text += " · " + say("won", GroupDigits(c.Won))
		}
		w(`<text x="24" y="%g" data-rule="%s" data-violations="%d">%s</text>`, y, esc(c.Rule.Name), c.Violations, esc(text))
	}
	w("</g>\n</svg>\n")
	return b.Bytes()
}

// attemptsWord counts attempts: "1 attempt", "40 attempts".
func attemptsWord(say func(string, ...any) string, n int) string {
	if n == 1 {
		return say("attempts-1", "1")
	}
	return say("attempts", GroupDigits(int64(n)))
}

// columnTitle is a column's tooltip: its stretch of clock, its attempts
// by outcome, and the lanes of its duplicates.
func (p Picture) columnTitle(bk PictureBucket, say func(string, ...any) string) string {
	parts := []string{p.clockLabel(bk.FromMS, say) + "–" + p.clockLabel(bk.ToMS, say), attemptsWord(say, bk.Attempts)}
	for _, o := range Outcomes {
		if c := bk.Counts.Of(o); c > 0 {
			parts = append(parts, say(string(o))+" "+GroupDigits(int64(c)))
		}
	}
	var again []string
	for _, a := range bk.Sample {
		if a.Outcome == OutcomePaidAgain && len(again) < 3 {
			again = append(again, a.Lane)
		}
	}
	if len(again) > 0 {
		parts = append(parts, say(string(OutcomePaidAgain))+": "+strings.Join(again, ", "))
	}
	return strings.Join(parts, " · ")
}

// tickMS is the clock's label interval: the shortest round length that is
// a whole number of buckets and gives at most eight intervals.
func (p Picture) tickMS() int64 {
	for _, s := range bucketSteps {
		if s >= p.StepMS && s%p.StepMS == 0 && p.SpanMS/s <= 8 {
			return s
		}
	}
	return max(p.SpanMS, 1)
}

// clockLabel writes a moment of the clock as the span reads best: hours
// and minutes for a day, minutes and seconds for an hour, seconds, or
// milliseconds for a storm.
func (p Picture) clockLabel(ms int64, say func(string, ...any) string) string {
	switch {
	case p.SpanMS >= 2*60*60*1000:
		return fmt.Sprintf("%d:%02d", ms/3_600_000, ms/60_000%60)
	case p.SpanMS >= 2*60*1000:
		return fmt.Sprintf("%d:%02d", ms/60_000, ms/1000%60)
	case p.SpanMS >= 2000:
		return say("s", decimal(ms, 1000))
	}
	return say("ms", strconv.FormatInt(ms, 10))
}

// duration writes a bucket's length in its largest whole unit.
func (p Picture) duration(ms int64, say func(string, ...any) string) string {
	switch {
	case ms >= 3_600_000 && ms%3_600_000 == 0:
		return say("h", strconv.FormatInt(ms/3_600_000, 10))
	case ms >= 60_000 && ms%60_000 == 0:
		return say("min", strconv.FormatInt(ms/60_000, 10))
	case ms >= 1000:
		return say("s", decimal(ms, 1000))
	}
	return say("ms", strconv.FormatInt(ms, 10))
}

// decimal writes n/unit with as few decimals as it needs.
func decimal(n, unit int64) string {
	return strconv.FormatFloat(float64(n)/float64(unit), 'f', -1, 64)
}

// niceCeil rounds n up to 1, 2 or 5 times a power of ten.
func niceCeil(n int64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}

// esc escapes text for XML character data and attribute values, as
// encoding/xml's EscapeText does (which the browser's module does not
// carry): the five special characters, tabs and line ends as references,
// and what XML cannot hold at all (other control characters, invalid
// UTF-8) as U+FFFD.
func esc(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&#34;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '\t':
			b.WriteString("&#x9;")
		case r == '\n':
			b.WriteString("&#xA;")
		case r == '\r':
			b.WriteString("&#xD;")
		case r == utf8.RuneError && size == 1, r < 0x20, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
