package grade

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReplicaRoutes: first attempts go round-robin, every later attempt
// under the same customer's key goes to the next replica, so no retry
// reaches the replica its previous attempt did; with one replica
// everything goes to it.
func TestReplicaRoutes(t *testing.T) {
	type send struct{ customer, key string }
	cases := []struct {
		name     string
		replicas int
		sends    []send
		want     []int
	}{
		{"one replica", 1, []send{{"a", "k1"}, {"a", "k1"}, {"a", ""}, {"b", "k1"}}, []int{0, 0, 0, 0}},
		{"retries alternate", 2, []send{{"a", "k1"}, {"a", "k1"}, {"a", "k1"}, {"a", "k1"}}, []int{0, 1, 0, 1}},
		{"new keys round-robin", 2, []send{{"a", "k1"}, {"a", "k2"}, {"a", "k3"}, {"a", "k2"}, {"a", "k3"}}, []int{0, 1, 0, 0, 1}},
		{"another customer's key is a new key", 2, []send{{"a", "k1"}, {"b", "k1"}, {"a", "k1"}, {"b", "k1"}}, []int{0, 1, 1, 0}},
		{"keyless requests round-robin", 3, []send{{"a", ""}, {"a", ""}, {"a", ""}, {"a", ""}}, []int{0, 1, 2, 0}},
		{"three replicas", 3, []send{{"a", "k1"}, {"a", "k1"}, {"a", "k1"}, {"a", "k1"}}, []int{0, 1, 2, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rt := newRouter(c.replicas)
			var got []int
			for _, s := range c.sends {
				got = append(got, rt.pick(s.customer, s.key))
			}
			assert.Equal(t, c.want, got)
		})
	}
}
