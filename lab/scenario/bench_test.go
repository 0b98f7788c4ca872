package scenario_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"idemlab/lab/scenario"
)

// BenchmarkOpen measures opening a session: a fresh SQLite database on the
// memdb VFS, its schema and the accounts.
func BenchmarkOpen(b *testing.B) {
	spec, err := scenario.Parse([]byte(storm))
	require.NoError(b, err)
	p, _ := spec.BasePolicy()
	// The first database of a process pays for compiling SQLite (once, and
	// under WebAssembly for seconds): warm up outside the measurement.
	warm, err := scenario.New(spec, p, scenario.Memory)
	require.NoError(b, err)
	warm.Close()
	for b.Loop() {
		s, err := scenario.New(spec, p, scenario.Memory)
		require.NoError(b, err)
		s.Close()
	}
}

// BenchmarkStep measures one learner step: one phase of one lane, then the
// whole state the page draws (snapshot, checker, verdicts).
func BenchmarkStep(b *testing.B) {
	spec, err := scenario.Parse([]byte(storm))
	require.NoError(b, err)
	p, _ := spec.BasePolicy()
	s, err := scenario.New(spec, p, scenario.Memory)
	require.NoError(b, err)
	defer s.Close()
	for b.Loop() {
		st := s.State()
		if st.Done {
			b.StopTimer()
			_, err = s.Reset()
			require.NoError(b, err)
			b.StartTimer()
			continue
		}
		_, err := s.Step(st.Next)
		require.NoError(b, err)
	}
}

// BenchmarkBack measures stepping back from the end of the storm: a fresh
// database and a replay of every move but the last.
func BenchmarkBack(b *testing.B) {
	spec, err := scenario.Parse([]byte(storm))
	require.NoError(b, err)
	p, _ := spec.BasePolicy()
	s, err := scenario.New(spec, p, scenario.Memory)
	require.NoError(b, err)
	defer s.Close()
	final, err := s.Run()
	require.NoError(b, err)
	b.ReportMetric(float64(final.Step), "moves")
	for b.Loop() {
		st, err := s.Back()
		require.NoError(b, err)
		b.StopTimer()
		_, err = s.Step(st.Next)
		require.NoError(b, err)
		b.StartTimer()
	}
}
