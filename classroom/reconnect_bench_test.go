package classroom_test

import (
	"bytes"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/classroom"
)

// BenchmarkClassroomReconnect100 is a Wi-Fi blip in a room of a hundred
// phones after a storm of 1,000 clients × 2 attempts: all hundred connect
// again at once, and each is sent the room's record (the storm, its
// events, the verdict). It measures how long the last phone waits for the
// verdict, and how many events each one received.
func BenchmarkClassroomReconnect100(b *testing.B) {
	env := newClassroomEnv(b, classroom.Config{Limits: classroom.Limits{ClassSize: 100}}) // a class of 100: its size set to fit
	code := env.openRoom()
	proj := env.projector(code)
	proj.send(map[string]any{"type": "storm", "storm": classroom.StormSpec{Level: "scoped", Clients: 1000, Keys: 20, Attempts: 2, LatencyMS: 5}})
	proj.until("report", func(m msg) bool { return strings.Contains(string(m.Raw), `"storm"`) })
	var waits []float64
	events := 0
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for p := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, _, err := env.dial(code, "", false, env.ts.URL, nil)
				if err != nil {
					b.Error(err)
					return
				}
				defer c.ws.Close()
				n := 0
				for {
					_, data, err := c.ws.ReadMessage()
					if err != nil {
						b.Error(err)
						return
					}
					if bytes.HasPrefix(data, []byte(`{"type":"events"`)) {
						n += bytes.Count(data, []byte(`"seq":`))
					}
					if bytes.HasPrefix(data, []byte(`{"type":"report"`)) {
						break
					}
				}
				mu.Lock()
				waits = append(waits, float64(time.Since(start).Microseconds())/1000)
				if p == 0 {
					events = n
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	sort.Float64s(waits)
	if len(waits) > 0 {
		b.ReportMetric(waits[len(waits)/2], "p50_ms")
		b.ReportMetric(waits[len(waits)-1], "last_ms")
	}
	b.ReportMetric(float64(events), "events/phone")
}
