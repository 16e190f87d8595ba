package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/internal/bench"
)

// A body of the wrong JSON shape is told so in JSON's words (a list, a whole
// number), on the batch route and the floor's, never in Go's types.
func TestServe_WrongShapesSaidInJSONsWords(t *testing.T) {
	needRedis(t)
	d := startServe(t, nil, "--bench-floor")
	for _, c := range []struct{ path, body, want string }{
		{"/v1/instructions/batch", `{"instructions": 5}`, `batch: field "instructions" must be a list, got number`},
		{"/v1/instructions/batch", `[1]`, `batch: want a JSON object, got array`},
		{bench.FloorPath + "h1", `{"amount": "5"}`, `the body is not {"amount": N}: field "amount" must be a whole number, got string`},
	} {
		a := d.do(t, http.MethodPost, c.path, c.body)
		wantErrorAnswer(t, a, http.StatusBadRequest, "INVALID_INSTRUCTION")
		var e errorBody
		strictJSON(t, string(a.body), &e)
		assert.Equal(t, c.want, e.Error.Message, c.body)
	}
}
