package stored_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/stored"
)

func eventFields() map[string]string {
	return map[string]string{"holder": "u1", "seq": "1", "id": "o", "fp": "fp1", "ts": "1700000000000",
		"cp": "external", "ops": `[{"op":"open"}]`, "state": `{"s":"1","st":"active"}`, "digest": "d", "memo": "", "dv": "2"}
}

func TestReadEntry(t *testing.T) {
	t.Run("an event's entry carries the event read and its fields as they were", func(t *testing.T) {
		f := eventFields()
		e := stored.ReadEntry("outbox:{1}", "1-0", f)
		require.NoError(t, e.Err)
		assert.Equal(t, "outbox:{1}", e.Stream)
		assert.Equal(t, "1-0", e.ID)
		assert.Equal(t, f, e.Fields)
		assert.Equal(t, "u1", e.Event.Holder)
		assert.Equal(t, int64(1), e.Event.Seq)
		assert.Equal(t, stored.DigestV2, e.Event.DV)
		assert.Equal(t, "1", e.Event.ParsedState().Seq)
		assert.Equal(t, f, e.Event.Fields(), "the event gives its fields back")
	})
	t.Run("an entry that is not an event says why and keeps its fields", func(t *testing.T) {
		f := eventFields()
		f["seq"] = "x"
		e := stored.ReadEntry("outbox:{1}", "1-0", f)
		require.Error(t, e.Err)
		assert.Equal(t, stored.Event{}, e.Event)
		assert.Equal(t, f, e.Fields)
		_, err := e.Read()
		assert.Equal(t, e.Err, err)
	})
	t.Run("an entry made of fields alone is read when asked", func(t *testing.T) {
		ev, err := stored.Entry{Fields: eventFields()}.Read()
		require.NoError(t, err)
		assert.Equal(t, "u1", ev.Holder)
		_, err = stored.Entry{Fields: map[string]string{"holder": "u1"}}.Read()
		assert.Error(t, err)
	})
	t.Run("Entries reads each", func(t *testing.T) {
		bad := eventFields()
		delete(bad, "ops")
		es := stored.Entries(eventFields(), bad)
		require.Len(t, es, 2)
		assert.NoError(t, es[0].Err)
		assert.Error(t, es[1].Err)
	})
}
