package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/atomledger/atomledger/instructions"
)

// instructionsURL gives the URL of POST /v1/instructions under the base URL
// of --server, or "" when there is none.
func instructionsURL(server string) (string, error) {
	if server == "" {
		return "", nil
	}
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--server %q: want a URL such as http://127.0.0.1:8080", server)
	}
	return u.JoinPath("v1", "instructions").String(), nil
}

// answer is a daemon's reply to one instruction.
type answer struct {
	body     []byte // a JSON object: a result, or an error object when rejected
	rejected bool
	err      error // no usable answer: the outcome is unknown
}

// postInstruction sends an instruction to a daemon. Without an answer that
// is a result (2xx) or an error object (any other status), the outcome is
// unknown: UNAVAILABLE, as when Redis itself does not answer.
func postInstruction(ctx context.Context, endpoint, token string, body []byte) answer {
	unknown := func(format string, args ...any) answer {
		return answer{err: instructions.Errorf(instructions.CodeUnavailable, instructions.NoOp,
			"outcome unknown, apply the same file again: "+format, args...)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return unknown("%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return unknown("%v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return unknown("read the answer: %v", err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return unknown("the daemon answered %s without a JSON object", resp.Status)
	}
	_, rejected := obj["error"]
	if rejected == (resp.StatusCode/100 == 2) {
		return unknown("the daemon answered %s with an unexpected body", resp.Status)
	}
	return answer{body: data, rejected: rejected}
}

// printAnswer prints a daemon's answer as apply prints its own outcome, and
// gives the exit status.
func printAnswer(c cli, a answer) int {
	if a.err != nil {
		return printOutcome(c, instructions.Result{}, a.err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSpace(a.body), "", "  "); err != nil {
		return printOutcome(c, instructions.Result{}, err)
	}
	out.WriteByte('\n')
	if _, err := c.stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(c.stderr, "engined apply: write the outcome: %v\n", err)
	}
	if a.rejected {
		return exitRejected
	}
	return exitOK
}
