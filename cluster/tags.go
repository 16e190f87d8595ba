package cluster

import (
	"fmt"
	"sync"
)

// tagAlphabet is the alphabet slot tags are spelled in, in enumeration order.
const tagAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

var (
	slotTagsOnce sync.Once
	slotTags     *[Slots]string
)

// SlotTag returns a short fixed string T with Slot(T) == slot, so that a key
// named "{T}:..." lives in that slot. The tag of each slot is the first string
// over [0-9a-z] that lands in it, enumerating shorter strings before longer ones
// and each length in alphabet order: the table never changes between builds or
// versions, so key names built from it are stable. Every tag has 1 to 4
// characters and none contains a brace. Clients in other languages compute
// the same tags by this rule (docs/json-door.md shows how).
//
// SlotTag panics if slot is not in [0, Slots).
func SlotTag(slot int) string {
	if slot < 0 || slot >= Slots {
		panic(fmt.Sprintf("cluster: slot %d out of range [0, %d)", slot, Slots))
	}
	slotTagsOnce.Do(func() { slotTags = makeSlotTags() })
	return slotTags[slot]
}

// makeSlotTags enumerates candidate tags until every slot has one. Strings of
// length 4 (36^4, about a hundred per slot) fill the last gaps, as the tests
// check, and the whole search takes milliseconds: it runs on first use rather
// than living in a generated file.
func makeSlotTags() *[Slots]string {
	var tags [Slots]string
	left := Slots
	buf := make([]byte, 0, 8)
	for n := 1; left > 0; n++ {
		buf = buf[:n]
		for i := range buf {
			buf[i] = tagAlphabet[0]
		}
		for {
			s := int(crc16(string(buf)) % Slots)
			if tags[s] == "" {
				tags[s] = string(buf)
				left--
			}
			if !nextTag(buf) {
				break
			}
		}
	}
	return &tags
}

// nextTag advances buf to the next string of the same length in alphabet
// order, like an odometer, and reports false once it wraps around.
func nextTag(buf []byte) bool {
	for i := len(buf) - 1; i >= 0; i-- {
		if buf[i] == tagAlphabet[len(tagAlphabet)-1] {
			buf[i] = tagAlphabet[0]
			continue
		}
		buf[i] = tagAlphabet[indexOfTagByte(buf[i])+1]
		return true
	}
	return false
}

func indexOfTagByte(b byte) int {
	if b <= '9' {
		return int(b - '0')
	}
	return 10 + int(b-'a')
}
