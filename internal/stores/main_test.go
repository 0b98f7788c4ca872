package stores_test

import (
	"testing"

	"idemlab/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
