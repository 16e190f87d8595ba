package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSlot_KnownVectors(t *testing.T) {
	tests := []struct {
		key  string
		want int
	}{
		{"123456789", 12739}, // the CRC-16/XMODEM check value, 0x31C3
		{"", 0},
		{"foo", 12182},
		{"somekey", 11058},
		{"foo{hash_tag}", 2515},
		{"{hash_tag}", 2515},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Slot(tt.key), "Slot(%q)", tt.key)
	}
	assert.Equal(t, Slot("{user1000}.following"), Slot("{user1000}.followers"))
}

func TestHashTag(t *testing.T) {
	tests := []struct {
		name, key, want string
	}{
		{"a key without braces hashes whole", "user1000", "user1000"},
		{"the tag is what the first braces hold", "{user1000}.following", "user1000"},
		{"the tag may be anywhere", "a{b}c", "b"},
		{"only the first pair counts", "{a}{b}", "a"},
		{"an empty tag hashes the whole key", "{}user", "{}user"},
		{"an empty first tag hides a later one", "{}{a}", "{}{a}"},
		{"an opening brace alone hashes the whole key", "{user", "{user"},
		{"a closing brace before the opening one is text", "}a{b}", "b"},
		{"nested braces end at the first closing one", "{{a}}", "{a"},
		{"the tag runs to the first closing brace", "x{a{b}c}", "a{b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, HashTag(tt.key))
		})
	}
}

// FuzzSlot checks the table-driven CRC and the tag rule against a plain
// bit-by-bit CRC and a byte loop written like the server's keyHashSlot.
func FuzzSlot(f *testing.F) {
	for _, k := range []string{"", "123456789", "{a}b", "{}a", "{{a}}", "a{b", "\xff{}"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if got, want := Slot(key), referenceSlot(key); got != want {
			t.Fatalf("Slot(%q) = %d, want %d", key, got, want)
		}
	})
}

func referenceSlot(key string) int {
	s := 0
	for s < len(key) && key[s] != '{' {
		s++
	}
	if s < len(key) {
		e := s + 1
		for e < len(key) && key[e] != '}' {
			e++
		}
		if e < len(key) && e != s+1 {
			key = key[s+1 : e]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc & 0x3FFF)
}
