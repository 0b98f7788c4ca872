package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTransferIDHasSixDigitsAtLeast: ids are zero-padded to six digits and
// grow past them, as fmt's %06d writes them.
func TestTransferIDHasSixDigitsAtLeast(t *testing.T) {
	for id, want := range map[int64]string{0: "tr_000000", 7: "tr_000007", 999999: "tr_999999", 1000000: "tr_1000000",
		1<<53 - 1: "tr_9007199254740991", -5: "tr_-00005"} {
		assert.Equal(t, want, TransferID(id))
	}
}

// TestCataloguesAreCopies: a caller that changes the list it was given
// changes nobody else's.
func TestCataloguesAreCopies(t *testing.T) {
	Levels()[0] = "mine"
	Phases()[0] = "mine"
	assert.Equal(t, LevelNaive, Levels()[0])
	assert.Equal(t, PhaseReceive, Phases()[0])
}
