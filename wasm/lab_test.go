package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type labAnswer struct {
	DB     string          `json:"db"`
	Conn   string          `json:"conn"`
	OK     json.RawMessage `json:"ok"`
	Broken []string        `json:"broken"`
	Notes  int             `json:"notes"`
	Err    *struct {
		Name, Code, Message string
	} `json:"err"`
}

func labDecode(t *testing.T, s string) labAnswer {
	t.Helper()
	var a labAnswer
	require.NoError(t, json.Unmarshal([]byte(s), &a), s)
	return a
}

const labSchema = `CREATE TABLE idem_keys (customer TEXT, idem_key TEXT, PRIMARY KEY (customer, idem_key));`

// TestLabBridgeDoublePayment plays the naive handler's double payment
// through the bridge, as the runner worker does, and judges it.
func TestLabBridgeDoublePayment(t *testing.T) {
	lb := newLabBridge()
	defer lb.closeAll()
	d := labDecode(t, lb.open(labSchema, `[{"id":"alice","balance":1000},{"id":"bob","balance":0}]`)).DB
	require.NotEmpty(t, d)
	for _, a := range []string{"a1", "a2"} {
		c := labDecode(t, lb.conn(d, a)).Conn
		require.Nil(t, labDecode(t, lb.exec(d, c, "begin", "", "")).Err)
		require.Nil(t, labDecode(t, lb.exec(d, c, "run", "UPDATE accounts SET balance = balance - ? WHERE id = ?", `[100, "alice"]`)).Err)
		require.Nil(t, labDecode(t, lb.exec(d, c, "run", "UPDATE accounts SET balance = balance + ? WHERE id = ?", `[100, "bob"]`)).Err)
		ins := labDecode(t, lb.exec(d, c, "run", "INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)", `["alice", "bob", 100, 1700000000000]`))
		require.Nil(t, ins.Err)
		require.Nil(t, labDecode(t, lb.exec(d, c, "commit", "", "")).Err)
		require.Nil(t, labDecode(t, lb.pay(d, `["`+a+`","cust","k","alice","bob",100,null]`)).Err)
		labDecode(t, lb.release(d, c))
	}
	run := `{"intents":[{"id":"i1","customer":"cust","from":"alice","to":"bob","amount":100}],"attempts":[
	 {"id":"a1","intent":"i1","customer":"cust","key":"\"k\"","body":"{\"from\":\"alice\",\"to\":\"bob\",\"amount\":100}","answered":true,"delivered":false,"status":201,"response":"{\"transfer_id\":\"tr_1\"}"},
	 {"id":"a2","intent":"i1","customer":"cust","key":"\"k\"","body":"{\"from\":\"alice\",\"to\":\"bob\",\"amount\":100}","answered":true,"delivered":true,"status":201,"response":"{\"transfer_id\":\"tr_2\"}"}],"brief":true}`
	j := labDecode(t, lb.judge(d, run))
	assert.Contains(t, j.Broken, "one-transfer-per-intent")
	assert.Contains(t, j.Broken, "one-charge-per-intent")

	require.Equal(t, `{"conns":{}}`, lb.reset(d, ""))
	j = labDecode(t, lb.judge(d, run))
	assert.NotContains(t, j.Broken, "one-transfer-per-intent", "the reset took the transfers away")

	c := labDecode(t, lb.conn(d, "a3")).Conn
	labDecode(t, lb.exec(d, c, "run", "INSERT INTO idem_keys VALUES (?, ?)", `["cust", "k"]`))
	dup := labDecode(t, lb.exec(d, c, "run", "INSERT INTO idem_keys VALUES (?, ?)", `["cust", "k"]`))
	require.NotNil(t, dup.Err)
	assert.Equal(t, "ConstraintError", dup.Err.Name)
	assert.Equal(t, "SQLITE_CONSTRAINT_PRIMARYKEY", dup.Err.Code)
	assert.Equal(t, `{"closed":true}`, lb.close(d))
	assert.NotNil(t, labDecode(t, lb.reset(d, "")).Err)
}

func TestAppendRowIsJSON(t *testing.T) {
	row := map[string]any{"n": int64(-5), "s": "a \"quoted\" \\ line\n한", "nil": nil, "f": 1.5, "k\u00e9": "x"}
	var back map[string]any
	require.NoError(t, json.Unmarshal(appendRow(nil, row), &back))
	assert.Equal(t, map[string]any{"n": float64(-5), "s": "a \"quoted\" \\ line\n한", "nil": nil, "f": 1.5, "k\u00e9": "x"}, back)
}

// verdict judges like judge, from the scenario set once and the answers
// of each schedule, and judges a schedule that ended alike only once.
func TestLabBridgeVerdict(t *testing.T) {
	lb := newLabBridge()
	defer lb.closeAll()
	d := labDecode(t, lb.open(labSchema, `[{"id":"alice","balance":1000},{"id":"bob","balance":0}]`)).DB
	require.Equal(t, `{}`, lb.scenario(d, `{"intents":[{"id":"i1","customer":"cust","from":"alice","to":"bob","amount":100}],"attempts":[
	 {"id":"a1","intent":"i1","customer":"cust","key":"\"k\"","body":"{\"from\":\"alice\",\"to\":\"bob\",\"amount\":100}"},
	 {"id":"a2","intent":"i1","customer":"cust","key":"\"k\"","body":"{\"from\":\"alice\",\"to\":\"bob\",\"amount\":100}"}]}`))
	for _, a := range []string{"a1", "a2"} {
		c := labDecode(t, lb.conn(d, a)).Conn
		require.Nil(t, labDecode(t, lb.exec(d, c, "run", "INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)", `["alice", "bob", 100, 1]`)).Err)
	}
	answers := `[["a1",1,1,201,"{\"transfer_id\":\"tr_1\"}",0],["a2",1,1,201,"{\"transfer_id\":\"tr_2\"}",0]]`
	v := labDecode(t, lb.verdict(d, answers))
	assert.Contains(t, v.Broken, "one-transfer-per-intent")
	assert.Len(t, lb.verdicts, 1)
	assert.Equal(t, lb.verdict(d, answers), lb.verdict(d, answers))
	assert.Len(t, lb.verdicts, 1, "judged once")
	lb.reset(d, "")
	v = labDecode(t, lb.verdict(d, answers))
	assert.NotContains(t, v.Broken, "one-transfer-per-intent", "another ledger, another verdict")

	// The answers' Content-Type (the tenth field): a replay without the
	// first answer's breaks rule 3.
	c := labDecode(t, lb.conn(d, "a1")).Conn
	require.Nil(t, labDecode(t, lb.exec(d, c, "run", "INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)", `["alice", "bob", 100, 1]`)).Err)
	same := `[["a1",1,1,201,"{\"transfer_id\":\"tr_1\"}",0,1,2,0,"application/json"],["a2",1,1,201,"{\"transfer_id\":\"tr_1\"}",1,3,4,0,"application/json"]]`
	assert.NotContains(t, labDecode(t, lb.verdict(d, same)).Broken, "replay-is-byte-identical")
	untyped := strings.Replace(same, `1,3,4,0,"application/json"`, `1,3,4,0,""`, 1)
	assert.Contains(t, labDecode(t, lb.verdict(d, untyped)).Broken, "replay-is-byte-identical")
}

// TestLabBridgeCountsANetworkFailureMet: the scenario says the network
// fails a1's first call to pay; a brief verdict counts it only where a1
// met it (the slips' flag 16). a1 answered 500 and its retry a2 made the
// transfer: where a1's pay failed, that 500 is the contract's answer to
// the network's failure; where a1 threw before it ever called pay, it is
// a handler that failed (one note more). (a2's transfer, with no charge
// in this test's database, is noted either way.)
func TestLabBridgeCountsANetworkFailureMet(t *testing.T) {
	lb := newLabBridge()
	defer lb.closeAll()
	d := labDecode(t, lb.open(labSchema, `[{"id":"alice","balance":1000},{"id":"bob","balance":0}]`)).DB
	require.Equal(t, `{}`, lb.scenario(d, `{"intents":[{"id":"i1","customer":"cust","from":"alice","to":"bob","amount":100}],"attempts":[
	 {"id":"a1","intent":"i1","customer":"cust","key":"\"k\"","body":"{\"from\":\"alice\",\"to\":\"bob\",\"amount\":100}","pay_fault":"down"},
	 {"id":"a2","intent":"i1","customer":"cust","key":"\"k\"","body":"{\"from\":\"alice\",\"to\":\"bob\",\"amount\":100}"}]}`))
	c := labDecode(t, lb.conn(d, "a2")).Conn
	require.Nil(t, labDecode(t, lb.exec(d, c, "run", "INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)", `["alice", "bob", 100, 1]`)).Err)
	answers := func(flag int) string {
		return `[["a1",1,1,500,"{\"status\":500}",0,1,2,` + strconv.Itoa(flag) + `,"application/problem+json"],["a2",1,1,201,"{\"transfer_id\":\"tr_1\"}",0,3,4,0,"application/json"]]`
	}
	assert.Equal(t, 1, labDecode(t, lb.verdict(d, answers(16))).Notes, "the network's failure met: a1's 500 is owed")
	assert.Equal(t, 2, labDecode(t, lb.verdict(d, answers(0))).Notes, "never met: a1's 500 is the handler's")
}
