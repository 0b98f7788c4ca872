package grade

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReplicaRoutes: first attempts go round-robin, every later attempt
// under the same customer's key goes to another replica than its first
// attempt's; with one replica everything goes to it.
func TestReplicaRoutes(t *testing.T) {
	type send struct{ customer, key string }
	cases := []struct {
		name     string
		replicas int
		sends    []send
		want     []int
	}{
		{"one replica", 1, []send{{"a", "k1"}, {"a", "k1"}, {"a", ""}, {"b", "k1"}}, []int{0, 0, 0, 0}},
		{"retries go to the other replica", 2, []send{{"a", "k1"}, {"a", "k1"}, {"a", "k1"}, {"a", "k1"}}, []int{0, 1, 1, 1}},
		{"new keys round-robin", 2, []send{{"a", "k1"}, {"a", "k2"}, {"a", "k3"}, {"a", "k2"}, {"a", "k3"}}, []int{0, 1, 0, 0, 1}},
		{"another customer's key is a new key", 2, []send{{"a", "k1"}, {"b", "k1"}, {"a", "k1"}, {"b", "k1"}}, []int{0, 1, 1, 0}},
		{"keyless requests round-robin", 3, []send{{"a", ""}, {"a", ""}, {"a", ""}, {"a", ""}}, []int{0, 1, 2, 0}},
		{"three replicas: retries take the other two in turn", 3, []send{{"a", "k1"}, {"a", "k1"}, {"a", "k1"}, {"a", "k1"}, {"a", "k1"}}, []int{0, 1, 2, 1, 2}},
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

// TestReplicaSplit: simultaneous attempts under one key are spread over
// every replica; each other key in the group is a first attempt in turn;
// a retry after the group avoids its first attempt's replica.
func TestReplicaSplit(t *testing.T) {
	req := func(customer, key string) Request { return keyed(customer, key, "{}") }
	rt := newRouter(2)
	got := rt.split([]Request{req("a", "k"), req("a", "k"), req("a", "k"), req("a", "k"), req("a", "x"), req("a", "y")})
	assert.Equal(t, []int{0, 1, 0, 1, 1, 0}, got)
	assert.Equal(t, 1, rt.pickRequest(req("a", "k")), "the retry after the group")
	assert.Equal(t, []int{0, 0}, newRouter(1).split([]Request{req("a", "k"), req("a", "k")}))
}
