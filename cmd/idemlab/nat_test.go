package main

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A class behind one address (a school's NAT) against a real `idemlab
// serve`: every phone gets in, and the abuse of "Hold up under abuse"
// replayed from inside that same address leaves the room usable.

// phone is a student's socket whose reader keeps up with everything the
// room sends (a phone that stops reading is dropped as too slow) and
// passes on what the test waits for.
type phone struct {
	ws   *websocket.Conn
	msgs chan phoneMsg
}

type phoneMsg struct {
	Type       string `json:"type"`
	Code       string `json:"code"`
	RetryAfter int    `json:"retry_after"`
}

// dialPhone opens a room's socket from addr; err is the handshake's
// status when the server refused it.
func dialPhone(base, code, addr string) (*phone, int, error) {
	d := &websocket.Dialer{NetDial: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}}).Dial,
		HandshakeTimeout: 30 * time.Second, EnableCompression: true}
	ws, res, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/classroom/ws/"+code, http.Header{"Origin": {base}})
	if err != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		return nil, status, err
	}
	p := &phone{ws: ws, msgs: make(chan phoneMsg, 64)}
	go func() {
		defer close(p.msgs)
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var m phoneMsg
			if json.Unmarshal(data, &m) == nil && (m.Type == "joined" || m.Type == "error" || m.Type == "result") {
				select {
				case p.msgs <- m:
				default: // nobody is waiting for it
				}
			}
		}
	}()
	return p, 0, nil
}

// join sends a join and returns the room's answer: "joined", or the
// refusal's code ("" when the socket closed first).
func (p *phone) join(nick, secret string) phoneMsg {
	p.ws.WriteJSON(map[string]string{"type": "join", "nickname": nick, "secret": secret})
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				return phoneMsg{}
			}
			if m.Type == "joined" || m.Type == "error" {
				return m
			}
		case <-timeout:
			return phoneMsg{Code: "no answer"}
		}
	}
}

// TestClassBehindOneAddressUnderAbuse: 200 phones behind one address join
// (each fifth pressing Join three times) and all get in; then, from that
// same address, 1,500 fake joins, compressed bombs, 50 wrong instructor
// secrets and 300 bank writes. Afterwards every phone is still in the room
// and sends a transfer, the instructor signed in behind that address opens
// a room and another signs in with the secret, and the server's peak
// memory stayed under 200 MB.
func TestClassBehindOneAddressUnderAbuse(t *testing.T) {
	if testing.Short() {
		t.Skip("1,700 sockets")
	}
	const class = "127.0.0.9"
	cmd, base := startAttacked(t, "--class-size", "220")
	jar, _ := cookiejar.New(nil)
	require.Equal(t, 200, signInFrom(t, base, class, abuseToken, jar), "the instructor signs in from the class's address")
	code := openRoomFrom(t, base, class, jar)

	var phones []*phone
	for i := range 200 {
		presses := 1
		if i%5 == 0 {
			presses = 3
		}
		var p *phone
		for press := range presses {
			var status int
			var err error
			p, status, err = dialPhone(base, code, class)
			require.NoError(t, err, "phone %d press %d: %d", i, press, status)
			require.Equal(t, "joined", p.join(fmt.Sprintf("p%d", i), fmt.Sprintf("%032x", 5000+i)).Type, "phone %d press %d", i, press)
		}
		phones = append(phones, p)
	}

	// The flood, from inside the class's address.
	var (
		mu       sync.Mutex
		outcomes = map[string]int{}
		wg       sync.WaitGroup
		next     = make(chan int)
	)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p, status, err := dialPhone(base, code, class)
				outcome := ""
				if err != nil {
					outcome = fmt.Sprintf("handshake %d", status)
				} else {
					m := p.join(fmt.Sprintf("fake%d", i), fmt.Sprintf("%032x", 900000+i))
					outcome = m.Type + " " + m.Code
					if m.Type != "joined" {
						p.ws.Close()
					}
				}
				mu.Lock()
				outcomes[outcome]++
				mu.Unlock()
			}
		}()
	}
	for i := range 1500 {
		next <- i
	}
	close(next)
	wg.Wait()
	t.Logf("1,500 fake joins from the class's address: %v", outcomes)
	assert.Equal(t, 20, outcomes["joined "], "the fakes take only the seats left under the class size")
	assert.Zero(t, outcomes["error "]+outcomes[" "]+outcomes[" no answer"], "every refusal is said: %v", outcomes)

	bomb := []byte(`{"type":"join","secret":"` + strings.Repeat("0", 64) + `","nickname":"` + strings.Repeat("a", 2_000_000) + `"}`)
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, 9)
	fw.Write(bomb)
	fw.Close()
	for range 20 {
		if p, _, err := dialPhone(base, code, class); err == nil {
			p.ws.SetCompressionLevel(9)
			p.ws.WriteMessage(websocket.TextMessage, bomb)
			for range p.msgs {
			}
		}
	}

	signIns := map[int]int{}
	for range 50 {
		signIns[signInFrom(t, base, class, "wrong-wrong-wrong-wrong", nil)]++
	}
	assert.Equal(t, map[int]int{401: 5, 429: 45}, signIns, "wrong secrets from the class's address are held off")
	bank := map[int]int{}
	httpc := httpFrom(class, nil)
	for i := range 300 {
		req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/bank/naive/accounts/grow-%d", base, i), strings.NewReader(`{"balance": 1000}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := httpc.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		bank[res.StatusCode]++
	}
	assert.Positive(t, bank[429], "the bank's rate holds: %v", bank)

	// The room is the class's: every phone is still in and sends.
	for i, p := range phones {
		require.NoError(t, p.ws.WriteJSON(map[string]string{"type": "send"}), "phone %d", i)
	}
	for i, p := range phones {
		got := ""
		timeout := time.After(30 * time.Second)
	wait:
		for {
			select {
			case m, ok := <-p.msgs:
				if !ok {
					got = "closed"
					break wait
				}
				if m.Type == "result" {
					got = "result"
					break wait
				}
			case <-timeout:
				got = "no result"
				break wait
			}
		}
		require.Equal(t, "result", got, "phone %d", i)
	}
	assert.Equal(t, 201, openRoomStatus(t, base, class, jar), "the signed-in instructor behind the class's address opens a room")
	other, _ := cookiejar.New(nil)
	assert.Equal(t, 200, signInFrom(t, base, "127.0.0.10", abuseToken, other), "the instructor at another address signs in")
	peak := peakRSS(t, cmd.Process.Pid)
	t.Logf("peak RSS %.1f MB", float64(peak)/(1<<20))
	assert.Less(t, peak, int64(200<<20), "peak memory under 200 MB")
}

// openRoomFrom opens a room as the signed-in instructor at addr.
func openRoomFrom(t *testing.T, base, addr string, jar http.CookieJar) string {
	t.Helper()
	status, code := postRoom(t, base, addr, jar)
	require.Equal(t, 201, status)
	return code
}

func openRoomStatus(t *testing.T, base, addr string, jar http.CookieJar) int {
	t.Helper()
	status, _ := postRoom(t, base, addr, jar)
	return status
}

// postRoom asks for a new room from addr with jar's cookies: the status,
// and the room's code when it opened.
func postRoom(t *testing.T, base, addr string, jar http.CookieJar) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/classroom/api/rooms", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	res, err := httpFrom(addr, jar).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var room struct{ Code string }
	json.NewDecoder(res.Body).Decode(&room)
	return res.StatusCode, room.Code
}
