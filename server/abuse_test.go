package server

import (
	"bytes"
	"compress/flate"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/server/classroom"
)

// The attacks of "Hold up under abuse", each from another loopback address
// standing for another machine on the classroom's network.

// from returns a dialer whose connections leave from addr (127.0.0.2 and
// up: another machine as far as the server can tell).
func from(addr string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 10 * time.Second}
}

// wsFrom is a websocket dialer from addr, offering compression.
func wsFrom(addr string) *websocket.Dialer {
	return &websocket.Dialer{NetDial: from(addr).Dial, HandshakeTimeout: 10 * time.Second, EnableCompression: true}
}

// bomb is a 2,000,000-byte join message that deflates to about 2 KB.
func bomb() []byte {
	return []byte(`{"type":"join","secret":"` + strings.Repeat("0", 64) + `","nickname":"` + strings.Repeat("a", 2_000_000) + `"}`)
}

// TestClassroomCompressedBombRefused sends a message that is under the read
// limit on the wire and 2 MB once inflated: the server stops inflating at
// the limit and closes the connection (1009) instead of reading it whole.
func TestClassroomCompressedBombRefused(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	c, _, err := env.dial(code, "", false, env.ts.URL, wsFrom("127.0.0.2"))
	require.NoError(t, err)
	c.readAll()
	c.next("welcome")
	require.NoError(t, c.ws.SetCompressionLevel(9))
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, 9)
	fw.Write(bomb())
	fw.Close()
	require.Less(t, z.Len(), classroom.MaxMessageBytes, "on the wire the bomb is under the read limit")
	require.NoError(t, c.ws.WriteMessage(websocket.TextMessage, bomb()))
	// Read whole, the message would be refused as a bad join and the
	// connection kept: an error message arrives instead of the close.
	for m := range c.msgs {
		require.NotEqual(t, "error", m.Type, "the 2 MB message was read whole: %s", m.Raw)
	}
	var ce *websocket.CloseError
	require.ErrorAs(t, c.err, &ce)
	assert.Equal(t, websocket.CloseMessageTooBig, ce.Code)
}
