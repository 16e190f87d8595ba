// A transfer's state as its callers read it: what Transfer and GetTransfer
// answer, made from the record, and its JSON.

package engine

import (
	stdjson "encoding/json"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/atomledger/atomledger/instructions"
)

// TransferState is the answer of Transfer and GetTransfer.
type TransferState struct {
	ID     string `json:"id"`
	Status string `json:"status"` // pending, committed or aborted
	// Complete is true once every part is finished: settled and credited
	// (committed) or given back (aborted). Until then readers may see one
	// part finished and another not.
	Complete bool `json:"complete"`
	Replayed bool `json:"replayed"`
	// Holders are the parts' holders, in the transfer's order.
	Holders []string `json:"holders"`
	// For an aborted transfer: the part whose rejection aborted it (absent
	// when it was aborted for want of a decision in time), and the error.
	PartIndex *int                `json:"part_index,omitempty"`
	Error     *instructions.Error `json:"error,omitempty"`
	CreatedMs int64               `json:"created_ms"`
}

// abortReason is the err field of an aborted record.
type abortReason struct {
	PartIndex *int                `json:"part_index,omitempty"`
	Error     *instructions.Error `json:"error"`
}

// AppendJSON appends st as encoding/json's Marshal writes it, byte for
// byte, without reflection: the daemon answers every transfer with one.
func (st TransferState) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = instructions.AppendJSONString(b, st.ID)
	b = append(b, `,"status":`...)
	b = instructions.AppendJSONString(b, st.Status)
	b = append(b, `,"complete":`...)
	b = strconv.AppendBool(b, st.Complete)
	b = append(b, `,"replayed":`...)
	b = strconv.AppendBool(b, st.Replayed)
	b = append(b, `,"holders":`...)
	if st.Holders == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, h := range st.Holders {
			if i > 0 {
				b = append(b, ',')
			}
			b = instructions.AppendJSONString(b, h)
		}
		b = append(b, ']')
	}
	if st.PartIndex != nil {
		b = append(b, `,"part_index":`...)
		b = strconv.AppendInt(b, int64(*st.PartIndex), 10)
	}
	if st.Error != nil {
		// Only an aborted transfer has one: it goes the way Marshal takes
		// it, through its MarshalJSON.
		e, err := stdjson.Marshal(st.Error)
		if err != nil {
			e = []byte("null")
		}
		b = append(append(b, `,"error":`...), e...)
	}
	b = append(b, `,"created_ms":`...)
	b = strconv.AppendInt(b, st.CreatedMs, 10)
	return append(b, '}')
}

func stateOf(id string, rec transferRecord) TransferState {
	st := TransferState{ID: id, Status: rec.status, Complete: rec.done, CreatedMs: rec.createdMs,
		Holders: strings.Split(rec.holders, ",")}
	if !strings.HasPrefix(id, instructions.HotSweepPrefix) {
		// The holders as the client named them: the record keeps the lane a
		// hot payee's credit went to, which no client can name. (A sweep's
		// parts are lanes of one holder: they keep their names.)
		for i, h := range st.Holders {
			st.Holders[i], _ = instructions.ParentOf(h)
		}
	}
	if rec.status == "preparing" {
		st.Status = TransferPending
	}
	if rec.err != "" {
		var r abortReason
		if json.Unmarshal([]byte(rec.err), &r) == nil {
			st.PartIndex, st.Error = r.PartIndex, r.Error
			if st.Error != nil {
				st.Error.ID = id
			}
		}
	}
	return st
}
