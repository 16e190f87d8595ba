package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// FuzzInstructionBody posts arbitrary bodies to POST /v1/instructions
// (batch false) and POST /v1/instructions/batch (batch true) of a server
// whose Redis is a closed port, so that every instruction that decodes
// answers UNAVAILABLE at once. The handler never panics, and its answer is
// always a documented status with a JSON body of the contract: an error
// object whose code maps to that status, or for a batch one entry per
// instruction, each an error object.
func FuzzInstructionBody(f *testing.F) {
	for _, seed := range []struct {
		batch bool
		body  string
	}{
		{false, `{"id":"i1","holder":"u1","ops":[{"op":"credit","asset":"CNY","amount":"1.00"}]}`},
		{false, `{"id":"i1","holder":"u1","ops":[{"op":"credit","asset":"CNY","amount":1}]}`},
		{false, `{"id":"i1","holder":"u1","ops":[]}`},
		{false, ``},
		{false, `[[[[[[[[[[[[[[[[[[[[`},
		{true, `{"instructions":[{"id":"i1","holder":"u1","ops":[{"op":"open"}]},{"id":"x"},7]}`},
		{true, `{"instructions":[]}`},
		{true, `{"instructions":null,"extra":1}`},
		{true, `{"instructions":[{}]} {}`},
	} {
		f.Add(seed.batch, []byte(seed.body))
	}

	// A closed port, no retries: one refused dial, no backoff.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1,
		DialerRetryTimeout: time.Millisecond, DialTimeout: 100 * time.Millisecond, PoolTimeout: 100 * time.Millisecond})
	f.Cleanup(func() { _ = rdb.Close() })
	s := newServer(engine.New(rdb, nil), rdb, []string{"t"}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	h := s.handler()

	documented := map[int]bool{}
	for _, row := range statusTable {
		documented[row.status] = true
	}

	f.Fuzz(func(t *testing.T, batch bool, body []byte) {
		path := "/v1/instructions"
		if batch {
			path += "/batch"
		}
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer t")
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)

		status, answer := w.Code, w.Body.Bytes()
		if !json.Valid(answer) {
			t.Fatalf("%d: answer is not JSON: %q", status, answer)
		}
		if status == http.StatusInternalServerError {
			t.Fatalf("500 INTERNAL for %q: %s", body, answer)
		}
		if status != http.StatusOK {
			if !documented[status] {
				t.Fatalf("undocumented status %d: %s", status, answer)
			}
			checkErrorObject(t, answer, status)
			return
		}
		if !batch {
			// Redis is never reached: no instruction can apply.
			t.Fatalf("200 for one instruction with no Redis: %s", answer)
		}
		var resp struct {
			Results []json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal(answer, &resp); err != nil {
			t.Fatalf("batch answer: %v: %s", err, answer)
		}
		var req batchRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatalf("batch of %q answered 200, but it does not decode: %v", body, err)
		}
		if len(resp.Results) != len(req.Instructions) || len(resp.Results) == 0 || len(resp.Results) > maxBatch {
			t.Fatalf("batch of %d instructions answered with %d results", len(req.Instructions), len(resp.Results))
		}
		for i, e := range resp.Results {
			code := checkErrorObject(t, e, 0)
			// An entry that does not decode answers its decode error; one
			// that does is refused by validation or goes to Redis, which is
			// not there.
			_, derr := instructions.Decode(req.Instructions[i])
			switch {
			case derr != nil && code != asError(derr).Code:
				t.Fatalf("entry %d answered %s, its decode error is %v: %s", i, code, derr, req.Instructions[i])
			case derr == nil && code != instructions.CodeUnavailable && httpStatus(code, false) != http.StatusBadRequest:
				t.Fatalf("entry %d decodes but answered %s: %s", i, code, req.Instructions[i])
			}
		}
	})
}

// FuzzTransferBody posts arbitrary bodies to POST /v1/transfers of a
// server whose Redis is a closed port. The handler never panics, and since
// no transfer can begin, its answer is always an error object whose code
// maps to its status: the decoder's or validation's refusal, or UNAVAILABLE.
func FuzzTransferBody(f *testing.F) {
	for _, seed := range []string{
		`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1.00"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"1.00"}]}]}`,
		`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1.00"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"2.00"}]}]}`,
		`{"id":"t1","parts":[{"holder":"a","ops":[]}],"holder":"x"}`,
		`{"id":"t1","parts":null}`,
		`{"id":"t1","parts":[{"holder":"a","holder":"b","ops":[]}]}`,
		``,
	} {
		f.Add([]byte(seed))
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1,
		DialerRetryTimeout: time.Millisecond, DialTimeout: 100 * time.Millisecond, PoolTimeout: 100 * time.Millisecond})
	f.Cleanup(func() { _ = rdb.Close() })
	s := newServer(engine.New(rdb, nil), rdb, []string{"t"}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	h := s.handler()

	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/v1/transfers", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer t")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%d: answer is not JSON: %q", w.Code, w.Body.Bytes())
		}
		if w.Code == http.StatusInternalServerError {
			t.Fatalf("500 INTERNAL for %q: %s", body, w.Body.Bytes())
		}
		code := checkErrorObject(t, w.Body.Bytes(), w.Code)
		if _, err := instructions.DecodeTransfer(body); err != nil && code != asError(err).Code {
			t.Fatalf("answered %s, the decode error is %v: %q", code, err, body)
		}
	})
}

// checkErrorObject checks that data is {"error": {"code": ..., "message": ...}}
// with a code of the contract, whose status is status unless status is 0. It
// returns the code.
func checkErrorObject(t *testing.T, data []byte, status int) instructions.Code {
	t.Helper()
	var obj struct {
		Error *struct {
			Code    instructions.Code `json:"code"`
			Message string            `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &obj); err != nil || obj.Error == nil {
		t.Fatalf("not an error object (%v): %s", err, data)
	}
	code := obj.Error.Code
	known := false
	for _, row := range statusTable {
		if row.code == code {
			known = true
		}
	}
	if !known || code == instructions.CodeInternal {
		t.Fatalf("code %q is not a documented one: %s", code, data)
	}
	if obj.Error.Message == "" {
		t.Fatalf("error without a message: %s", data)
	}
	if status != 0 && httpStatus(code, false) != status {
		t.Fatalf("code %s answered %d, the contract says %d", code, status, httpStatus(code, false))
	}
	return code
}
