// Package grade is idemlab's black-box grader: it speaks the lab contract
// (docs/lab-contract.md) over HTTP to any endpoint, in any language, and
// judges it by the lab's seven rules. It also replays a day of traffic over
// HTTP. It lives apart from package lab so that the browser's WebAssembly
// module, which imports the lab, carries no net/http.
package grade

import (
	"bufio"
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
}

// NewClient returns a client for the endpoint at base (http or https).
// timeout bounds each request.
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
		timeout = 10 * time.Second
	}
	c := &Client{base: u, dialer: net.Dialer{Timeout: timeout}, timeout: timeout}
	if u.Scheme == "https" {
		c.tls = &tls.Config{ServerName: u.Hostname()}
	}
	return c, nil
}

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
	deadline := time.Now().Add(c.timeout)
	p.conn.SetDeadline(deadline)
	err := p.req.Write(p.conn)
	if written != nil {
		written()
	}
	if err != nil {
		return Reply{Err: fmt.Errorf("send: %w", err)}
	}
	if p.cut {
		var one [1]byte
		_, err := p.conn.Read(one[:])
		if tc, ok := p.conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // reset, as a load balancer does, instead of a polite close
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return Reply{Err: fmt.Errorf("wait for the answer to start: %w", err)}
		}
		return Reply{}
	}
	resp, err := http.ReadResponse(bufio.NewReader(p.conn), p.req)
	if err != nil {
		return Reply{Err: fmt.Errorf("read answer: %w", err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if err != nil {
		return Reply{Status: resp.StatusCode, Header: resp.Header, Err: fmt.Errorf("read answer body: %w", err)}
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// Do sends one request on a fresh connection.
func (c *Client) Do(ctx context.Context, r Request) Reply {
	p, err := c.prepare(ctx, r)
	if err != nil {
		return Reply{Err: fmt.Errorf("connect: %w", err)}
	}
	return c.finish(p, nil)
}

// Together opens one connection per request first, then writes every
// request at the same moment, so that they arrive together.
func (c *Client) Together(ctx context.Context, rs []Request) []Reply {
	out := make([]Reply, len(rs))
	ps := make([]*prepared, len(rs))
	for i, r := range rs {
		p, err := c.prepare(ctx, r)
		if err != nil {
			out[i] = Reply{Err: fmt.Errorf("connect: %w", err)}
			continue
		}
		ps[i] = p
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range ps {
		if p == nil {
			continue
		}
		wg.Go(func() {
			<-start
			out[i] = c.finish(p, nil)
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

// Curl renders a request as a curl line a student can paste.
func Curl(base string, r Request) string {
	var b strings.Builder
	b.WriteString("curl -sS -i")
	if r.Method != "GET" {
		b.WriteString(" -X " + r.Method)
	}
	b.WriteString(" " + shellQuote(strings.TrimRight(base, "/")+r.Path))
	for _, h := range r.Header {
		b.WriteString(" -H " + shellQuote(h[0]+": "+h[1]))
	}
	if r.Body != "" {
		b.WriteString(" --data-raw " + shellQuote(r.Body))
	}
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
