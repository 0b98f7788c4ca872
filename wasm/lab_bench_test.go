package main

import "testing"

// BenchmarkLabSchedule is one schedule of the naive handler's two
// attempts through the bridge, as the runner makes it, judged.
func BenchmarkLabSchedule(b *testing.B) {
	lb := newLabBridge()
	defer lb.closeAll()
	d := labDecode(&testing.T{}, lb.open(labSchema, `[{"id":"alice","balance":1000000},{"id":"bob","balance":0}]`)).DB
	run := `{"intents":[{"id":"i1","customer":"cust","from":"alice","to":"bob","amount":100}],"attempts":[
	 {"id":"a1","intent":"i1","customer":"cust","key":"\"k\"","body":"{\"from\":\"alice\",\"to\":\"bob\",\"amount\":100}","answered":true,"delivered":false,"status":201,"response":"{\"transfer_id\":\"tr_1\"}"},
	 {"id":"a2","intent":"i1","customer":"cust","key":"\"k\"","body":"{\"from\":\"alice\",\"to\":\"bob\",\"amount\":100}","answered":true,"delivered":true,"status":201,"response":"{\"transfer_id\":\"tr_2\"}"}],"brief":true}`
	b.Run("judge", func(b *testing.B) {
		for b.Loop() {
			lb.judge(d, run)
		}
	})
	b.Run("schedule", func(b *testing.B) {
		for b.Loop() {
			lb.reset(d, `["a1","a2"]`)
			for _, a := range []string{"a1", "a2"} {
				c := labDecode(&testing.T{}, lb.conn(d, a)).Conn
				lb.exec(d, c, "begin", "", "")
				lb.exec(d, c, "get", "SELECT balance FROM accounts WHERE id = ?", `["alice"]`)
				lb.exec(d, c, "run", "UPDATE accounts SET balance = balance - ? WHERE id = ?", `[100, "alice"]`)
				lb.exec(d, c, "run", "UPDATE accounts SET balance = balance + ? WHERE id = ?", `[100, "bob"]`)
				lb.exec(d, c, "run", "INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)", `["alice", "bob", 100, 1700000000000]`)
				lb.exec(d, c, "commit", "", "")
				lb.pay(d, `["`+a+`","cust","k","alice","bob",100,null]`)
				lb.release(d, c)
			}
			lb.judge(d, run)
		}
	})
}
