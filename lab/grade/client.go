// Package grade is idemlab's black-box grader: it speaks the lab contract
// (docs/lab-contract.md) over HTTP to any endpoint, in any language, and
// judges it by the lab's rules, all but the eighth: the endpoint's payment
// processor is out of its sight. It also replays a day of traffic over
// HTTP. It lives apart from package lab so that the browser's WebAssembly
// module, which imports the lab, carries no net/http.
package grade

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxResponseBytes is the most of an answer the grader reads.
const MaxResponseBytes = 1 << 20

// Request is one HTTP request the grader sends, kept so that a report can
// print it as a curl line.
type Request struct {
	Method string `json:"method"`
	// Path is below the base URL: "/transfers", "/accounts/x".
	Path string `json:"path"`
	// Header keeps names and values in the order they are written; a name
	// may repeat (two Idempotency-Key lines).
	Header [][2]string `json:"header,omitempty"`
	Body   string      `json:"body,omitempty"`
	// Cut is true when the grader closed the connection without reading
	// the answer.
	Cut bool `json:"cut,omitempty"`
}

// Reply is what came back.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
	// Err is set when no answer could be read (and the request was not
	// cut on purpose).
	Err error
	// At is when the answer's head arrived (or the request failed), so
	// that simultaneous requests can be told apart by who answered first.
	At time.Time
}

// Replayed reports whether the answer says it is a replay.
func (r Reply) Replayed() bool { return strings.EqualFold(r.Header.Get("Idempotent-Replayed"), "true") }

// Client sends requests to one endpoint, each on its own connection, so
// that it controls exactly when a connection is cut. It is safe for
// concurrent use.
type Client struct {
	base    *url.URL
	dialer  net.Dialer
	tls     *tls.Config
	timeout time.Duration
	// pool carries the requests whose answers are read, on kept-alive
	// connections, as an ordinary client does; a request that is cut gets
	// a connection of its own.
	pool *http.Client
}

// DefaultTimeout bounds each of the grader's requests when no timeout is
// given.
const DefaultTimeout = 10 * time.Second

// NewClient returns a client for the endpoint at base (http or https).
// timeout bounds each request; DefaultTimeout when zero.
func NewClient(base string, timeout time.Duration) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil {
		return nil, fmt.Errorf("grade: base URL %q: %w", base, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("grade: base URL %q must be http://host[:port][/path] or https://…", base)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("grade: base URL %q must have no query or fragment", base)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &Client{base: u, dialer: net.Dialer{Timeout: timeout}, timeout: timeout}
	if u.Scheme == "https" {
		c.tls = &tls.Config{ServerName: u.Hostname()}
	}
	c.pool = &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: c.dialer.DialContext, TLSClientConfig: c.tls, ForceAttemptHTTP2: false,
		MaxIdleConns: 128, MaxIdleConnsPerHost: 128, IdleConnTimeout: 30 * time.Second, DisableCompression: true,
	}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c, nil
}

// Close closes the kept-alive connections.
func (c *Client) Close() { c.pool.CloseIdleConnections() }

// Base returns the endpoint's base URL.
func (c *Client) Base() string { return c.base.String() }

func (c *Client) hostPort() string {
	if c.base.Port() != "" {
		return c.base.Host
	}
	if c.base.Scheme == "https" {
		return net.JoinHostPort(c.base.Hostname(), "443")
	}
	return net.JoinHostPort(c.base.Hostname(), "80")
}

func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	conn, err := c.dialer.DialContext(ctx, "tcp", c.hostPort())
	if err != nil {
		return nil, err
	}
	if c.tls != nil {
		tc := tls.Client(conn, c.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		return tc, nil
	}
	return conn, nil
}

func (c *Client) httpRequest(ctx context.Context, r Request) (*http.Request, error) {
	u := *c.base
	u.Path = c.base.Path + r.Path
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), strings.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	if r.Body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for _, h := range r.Header {
		req.Header[h[0]] = append(req.Header[h[0]], h[1])
	}
	req.Header.Set("User-Agent", "idemlab-grader")
	req.Close = true
	return req, nil
}

// prepared is a request on an open connection, not yet written.
type prepared struct {
	conn net.Conn
	req  *http.Request
	cut  bool
	// br reads the connection when it has carried an earlier exchange.
	br *bufio.Reader
}

// warm sends one harmless request (a GET of path) on p's connection
// and reads its answer, so that the server has a worker and whatever it
// opens per connection (a thread, a database handle) ready before the real
// request. It reports false when the server closed the connection after
// answering; the caller then needs a fresh one.
func (c *Client) warm(ctx context.Context, p *prepared, path string) bool {
	req, err := c.httpRequest(ctx, Request{Method: "GET", Path: path})
	if err != nil {
		return false
	}
	req.Close = false
	p.conn.SetDeadline(time.Now().Add(c.timeout))
	if err := req.Write(p.conn); err != nil {
		return false
	}
	br := bufio.NewReader(p.conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBytes))
	resp.Body.Close()
	if resp.Close || br.Buffered() > 0 {
		return false
	}
	p.br = br
	return true
}

func (c *Client) prepare(ctx context.Context, r Request) (*prepared, error) {
	req, err := c.httpRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	return &prepared{conn: conn, req: req, cut: r.Cut}, nil
}

// bytes is the request as it goes on the wire.
func (p *prepared) bytes() ([]byte, error) {
	var b bytes.Buffer
	err := p.req.Write(&b)
	return b.Bytes(), err
}

// finish writes the request and reads the answer, or, for a cut request,
// waits until the answer starts to arrive and closes the connection
// without reading it: the server has done its work and the client never
// learns the outcome. (Cutting before the answer exists would race the
// server's own reaction to a vanished client.)
//
// written, when not nil, is called once the request is on the wire (or
// failed to get there).
func (c *Client) finish(p *prepared, written func()) Reply {
	defer p.conn.Close()
	p.conn.SetDeadline(time.Now().Add(c.timeout))
	raw, err := p.bytes()
	if err == nil {
		_, err = p.conn.Write(raw)
	}
	if written != nil {
		written()
	}
	if err != nil {
		return Reply{Err: fmt.Errorf("send: %w", err)}
	}
	return c.receive(p)
}

// receive reads the answer of a sent request (or cuts it).
func (c *Client) receive(p *prepared) Reply {
	if p.cut {
		var one [1]byte
		_, err := p.conn.Read(one[:])
		if tc, ok := p.conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // reset, as a load balancer does, instead of a polite close
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return Reply{Err: fmt.Errorf("wait for the answer to start: %w", err), At: time.Now()}
		}
		return Reply{At: time.Now()}
	}
	br := p.br
	if br == nil {
		br = bufio.NewReader(p.conn)
	}
	resp, err := http.ReadResponse(br, p.req)
	at := time.Now()
	if err != nil {
		return Reply{Err: fmt.Errorf("read answer: %w", err), At: at}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if err != nil {
		return Reply{Status: resp.StatusCode, Header: resp.Header, Body: body, Err: fmt.Errorf("read answer body: %w", err), At: at}
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: body, At: at}
}

// Do sends one request: on a kept-alive connection when its answer is to
// be read, on a fresh one when it is to be cut.
func (c *Client) Do(ctx context.Context, r Request) Reply {
	if r.Cut {
		p, err := c.prepare(ctx, r)
		if err != nil {
			return Reply{Err: fmt.Errorf("connect: %w", err)}
		}
		return c.finish(p, nil)
	}
	req, err := c.httpRequest(ctx, r)
	if err != nil {
		return Reply{Err: err}
	}
	req.Close = false
	resp, err := c.pool.Do(req)
	at := time.Now()
	if err != nil {
		return Reply{Err: fmt.Errorf("send: %w", err), At: at}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if err != nil {
		return Reply{Status: resp.StatusCode, Header: resp.Header, Body: body, Err: fmt.Errorf("read answer body: %w", err), At: at}
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: body, At: at}
}

// warmPath is what warms a connection for r: reading the payer's account,
// which makes the server open its database for this connection too.
func warmPath(r Request) string {
	var t struct {
		From string `json:"from"`
	}
	if json.Unmarshal([]byte(r.Body), &t) == nil && t.From != "" {
		return "/accounts/" + url.PathEscape(t.From)
	}
	return ""
}

// TogetherSettle is how long Together waits, with every request sent but
// its last byte, before it sends the last bytes: long enough for a server
// to have read every header and to sit waiting for the end of each body.
const TogetherSettle = 50 * time.Millisecond

// Together makes requests arrive at the same moment, as closely as a
// client can. It opens one connection per request and warms each with a
// GET, as a client that keeps its connections alive would have; then it
// sends each request but its last byte, lets the server read that far, and
// sends every last byte at once, so that the server's handlers start within
// microseconds of one another. Every connection is warm before any request
// starts, so a server that serializes its work cannot make a warm-up wait
// on a half-sent request.
func (c *Client) Together(ctx context.Context, rs []Request) []Reply {
	cs := make([]*Client, len(rs))
	for i := range cs {
		cs[i] = c
	}
	return together(ctx, cs, rs)
}

// together is Together with each request sent to its own client: rs[i]
// goes to cs[i], so that simultaneous requests can reach several replicas
// of one endpoint at the same moment.
func together(ctx context.Context, cs []*Client, rs []Request) []Reply {
	out := make([]Reply, len(rs))
	ps := make([]*prepared, len(rs))
	for i, r := range rs {
		c := cs[i]
		p, err := c.prepare(ctx, r)
		if err == nil && !c.warm(ctx, p, warmPath(r)) {
			p.conn.Close()
			p, err = c.prepare(ctx, r)
		}
		if err != nil {
			out[i] = Reply{Err: fmt.Errorf("connect: %w", err)}
			continue
		}
		ps[i] = p
	}
	last := make([][]byte, len(rs))
	for i, p := range ps {
		if p == nil {
			continue
		}
		p.conn.SetDeadline(time.Now().Add(cs[i].timeout + TogetherSettle))
		raw, err := p.bytes()
		if err == nil {
			_, err = p.conn.Write(raw[:len(raw)-1])
		}
		if err != nil {
			p.conn.Close()
			ps[i], out[i] = nil, Reply{Err: fmt.Errorf("send: %w", err)}
			continue
		}
		last[i] = raw[len(raw)-1:]
	}
	time.Sleep(TogetherSettle)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range ps {
		if p == nil {
			continue
		}
		wg.Go(func() {
			defer p.conn.Close()
			<-start
			if _, err := p.conn.Write(last[i]); err != nil {
				out[i] = Reply{Err: fmt.Errorf("send: %w", err)}
				return
			}
			out[i] = cs[i].receive(p)
		})
	}
	close(start)
	wg.Wait()
	return out
}

// PutAccount sets an account's balance.
func (c *Client) PutAccount(ctx context.Context, id string, balance int64) (Request, error) {
	r := Request{Method: "PUT", Path: "/accounts/" + id, Header: [][2]string{{"Content-Type", "application/json"}},
		Body: `{"balance":` + strconv.FormatInt(balance, 10) + `}`}
	rep := c.Do(ctx, r)
	if rep.Err != nil {
		return r, fmt.Errorf("PUT /accounts/%s: %w", id, rep.Err)
	}
	if rep.Status != 200 && rep.Status != 201 {
		return r, fmt.Errorf("PUT /accounts/%s answered %d %s; the contract wants 200", id, rep.Status, snippet(rep.Body))
	}
	return r, nil
}

// GetBalance reads an account's balance.
func (c *Client) GetBalance(ctx context.Context, id string) (int64, error) {
	rep := c.Do(ctx, Request{Method: "GET", Path: "/accounts/" + id})
	if rep.Err != nil {
		return 0, fmt.Errorf("GET /accounts/%s: %w", id, rep.Err)
	}
	if rep.Status != 200 {
		return 0, fmt.Errorf("GET /accounts/%s answered %d %s; the contract wants 200 {\"id\",\"balance\"}", id, rep.Status, snippet(rep.Body))
	}
	var a struct {
		Balance *json.Number `json:"balance"`
	}
	if err := json.Unmarshal(rep.Body, &a); err != nil || a.Balance == nil {
		return 0, fmt.Errorf("GET /accounts/%s: the body %s has no numeric \"balance\"", id, snippet(rep.Body))
	}
	n, err := a.Balance.Int64()
	if err != nil {
		return 0, fmt.Errorf("GET /accounts/%s: balance %s is not a whole number", id, a.Balance)
	}
	return n, nil
}

// Retention reads the retention the endpoint publishes at its base URL
// (GET {base} → {"retention_seconds": N}). ok is false when it publishes
// none.
func (c *Client) Retention(ctx context.Context) (time.Duration, bool) {
	rep := c.Do(ctx, Request{Method: "GET", Path: ""})
	if rep.Err != nil || rep.Status != 200 {
		return 0, false
	}
	var p struct {
		RetentionSeconds *float64 `json:"retention_seconds"`
	}
	if json.Unmarshal(rep.Body, &p) != nil || p.RetentionSeconds == nil || *p.RetentionSeconds < 0 {
		return 0, false
	}
	return time.Duration(*p.RetentionSeconds * float64(time.Second)), true
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
