//go:build !linux

package stores_test

import "time"

// Where there is no /proc or getrusage the benchmark reports no CPU times.

func processCPU() time.Duration               { return 0 }
func parentOf(int) int                        { return 0 }
func clusterCPU(postmaster int) time.Duration { return 0 }
