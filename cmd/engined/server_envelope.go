package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// strictKeys refuses, in the JSON object data, a key given twice or one not
// spelled exactly as one of keys. encoding/json would take the last of two
// duplicates and match a key whatever its case: a batch whose meaning
// depends on that is refused, as an instruction is (instructions.Decode).
// Shape errors are left to the decoder.
func strictKeys(data []byte, keys ...string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		switch {
		case seen[key]:
			return fmt.Errorf("field %.64q is given twice", key)
		case !slices.Contains(keys, key):
			return fmt.Errorf("unknown field %.64q", key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}
