package cluster

import "strings"

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

// crc16Table is the byte-wise lookup table of CRC-16/XMODEM (polynomial
// 0x1021, initial value 0, no reflection), the checksum Redis Cluster uses.
var crc16Table = makeCRC16Table(0x1021)

func makeCRC16Table(poly uint16) *[256]uint16 {
	var t [256]uint16
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ poly
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return &t
}

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}

// HashTag returns the part of key that Redis Cluster hashes: the text between
// the first '{' and the first '}' after it when that text is not empty, else
// the whole key. So "{a}b" hashes "a", while "{}a", "a{" and "{a" hash the
// whole key, and "{{a}}" hashes "{a".
func HashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	n := strings.IndexByte(key[open+1:], '}')
	if n <= 0 {
		return key
	}
	return key[open+1 : open+1+n]
}

// Slot returns the hash slot of key, as CLUSTER KEYSLOT does: CRC-16/XMODEM
// of the key's hash tag (see HashTag) modulo Slots.
func Slot(key string) int {
	return int(crc16(HashTag(key)) % Slots)
}
