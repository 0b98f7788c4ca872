package classroom

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"idemlab/internal/limit"
	"idemlab/internal/peer"
)

// Roles of a connection.
const (
	RoleProjector = "projector" // the instructor's screen: controls the room
	RoleStudent   = "student"   // a phone: a flaky client with a nickname
)

// conn is one websocket in a room. Exactly one goroutine reads (readLoop)
// and one writes (writeLoop); everything else hands the writer prepared
// messages through send, without ever blocking: when send is full the
// client is too slow and is dropped, so one phone in a basement cannot
// hold up the room.
type conn struct {
	ws   *websocket.Conn
	room *Room
	role string
	send chan *websocket.PreparedMessage
	done chan struct{}
	once sync.Once
	// limit bounds every message this connection sends, whoever it is.
	limit *limit.Bucket

	// student is set once a phone has joined; owned by the room's goroutine.
	student *student
	// joinURL is the address phones open, for a projector's join screen.
	joinURL string
	// peer is who opened the socket; release gives its slot back to the
	// address's limit when the socket closes.
	peer    peer.Peer
	release func()
	// opened is when the socket was attached; refused is set once the room
	// turned it away (it closes as soon as its writer has said why). Both
	// are owned by the room's goroutine.
	opened  time.Time
	refused bool
}

func newConn(ws *websocket.Conn, r *Room, role string) *conn {
	return &conn{ws: ws, room: r, role: role, send: make(chan *websocket.PreparedMessage, r.cl.cfg.SendQueue),
		done: make(chan struct{}), limit: limit.NewBucket(r.cl.cfg.MessagesPerSecond, r.cl.cfg.MessageBurst)}
}

// offer queues m for the writer. It never blocks: a full queue means the
// client is not keeping up, and it is disconnected instead of waited for.
func (c *conn) offer(m *websocket.PreparedMessage) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	select {
	case c.send <- m:
		return true
	default:
		c.drop()
		return false
	}
}

// closeAfterQueued closes the connection once the writer has sent what is
// queued before it (a refusal's words), with a close frame. It never
// blocks: with the queue full, the connection closes at once.
func (c *conn) closeAfterQueued() {
	select {
	case c.send <- nil:
	default:
		c.close()
	}
}

// drop disconnects a client that is not keeping up and counts it.
func (c *conn) drop() {
	select {
	case <-c.done:
		return // already closed for another reason
	default:
	}
	c.room.noteDropped()
	c.close()
}

// close ends the connection once. Closing the socket unblocks the reader
// and the writer, which then return; the reader unregisters from the room.
func (c *conn) close() {
	c.once.Do(func() {
		close(c.done)
		// The address's slot is given back before the socket closes, so
		// that a client that sees the close and opens another finds it
		// free.
		if c.release != nil {
			c.release()
		}
		c.ws.Close()
	})
}

// writeLoop is the connection's only writer: queued messages and pings,
// each under a write deadline, so that a client that stopped reading is cut
// off after WriteWait instead of holding a goroutine forever.
func (c *conn) writeLoop() {
	cfg := &c.room.cl.cfg
	ping := time.NewTicker(cfg.PingPeriod)
	defer func() {
		ping.Stop()
		c.close()
	}()
	for {
		select {
		case <-c.done:
			return
		case m := <-c.send:
			c.ws.SetWriteDeadline(time.Now().Add(cfg.WriteWait))
			if m == nil { // closeAfterQueued: everything before it is sent
				c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "refused"))
				return
			}
			if err := c.ws.WritePreparedMessage(m); err != nil {
				if isTimeout(err) {
					c.drop() // the client stopped reading
				}
				return
			}
		case <-ping.C:
			c.ws.SetWriteDeadline(time.Now().Add(cfg.WriteWait))
			if err := c.ws.WriteMessage(websocket.PingMessage, nil); err != nil {
				return
			}
		}
	}
}

// readLoop is the connection's only reader. It enforces the read limit and
// the pong deadline and hands each message to the room.
func (c *conn) readLoop() {
	cfg := &c.room.cl.cfg
	defer func() {
		c.close()
		c.room.leave(c)
	}()
	c.ws.SetReadLimit(MaxMessageBytes)
	c.ws.SetReadDeadline(time.Now().Add(cfg.PongWait))
	c.ws.SetPongHandler(func(string) error {
		c.ws.SetReadDeadline(time.Now().Add(cfg.PongWait))
		return nil
	})
	strikes := 0
	for {
		kind, data, err := c.readMessage()
		if err != nil {
			return
		}
		c.ws.SetReadDeadline(time.Now().Add(cfg.PongWait))
		if !c.limit.Allow(time.Now()) {
			// A client that keeps flooding after being told is cut off.
			strikes++
			if strikes > 20 {
				return
			}
			c.room.tell(c, errorMsg("rate-limited", "slow down: too many messages"))
			continue
		}
		if kind != websocket.TextMessage {
			c.room.tell(c, errorMsg("bad-message", "messages are JSON text"))
			continue
		}
		m, err := DecodeClientMessage(data)
		if err != nil {
			c.room.tell(c, errorMsg("bad-message", err.Error()))
			continue
		}
		c.room.handle(c, m)
	}
}

// errInflatedTooBig ends a connection whose message inflates past
// MaxMessageBytes.
var errInflatedTooBig = errors.New("classroom: message inflates past the read limit")

// readMessage reads one message, at most MaxMessageBytes once inflated.
// The websocket's read limit counts the bytes on the wire, which a
// compressed (permessage-deflate) message can multiply a thousandfold: 2 KB
// sent would be 2 MB read. So the inflated stream is cut at the limit too,
// and a client that sends more is disconnected.
func (c *conn) readMessage() (int, []byte, error) {
	kind, rd, err := c.ws.NextReader()
	if err != nil {
		return 0, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(rd, MaxMessageBytes+1))
	if err != nil {
		return 0, nil, err
	}
	if len(data) > MaxMessageBytes {
		c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseMessageTooBig, "message too big"),
			time.Now().Add(time.Second))
		return 0, nil, errInflatedTooBig
	}
	return kind, data, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
