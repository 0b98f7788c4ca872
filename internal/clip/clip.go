// Package clip shortens what a client sent before a message quotes it back:
// the engine's problem details and the classroom's refusals each quote a
// bounded piece, so that a megabyte header never becomes a megabyte log line
// or answer.
package clip

// String returns s cut to its first n bytes and marked with an ellipsis,
// or s itself when it is no longer than n.
func String(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
