// Package cluster owns where data lives in Redis Cluster: key names, hash
// tags and slot maths.
//
// # Slots and hash tags
//
// A Redis Cluster splits the key space into Slots (16384) hash slots; each
// slot is served by one master. Slot computes a key's slot exactly as the
// server does: CRC-16/XMODEM of the key's hash tag (the text between the
// first '{' and the next '}', when not empty) or of the whole key. A script
// may only touch keys of one slot, so every key one instruction needs shares
// a hash tag.
//
// # Keys
//
// A holder's keys share the tag "{h:<holder>}" (see Holder, Tx): one
// instruction runs in one slot of one shard, atomically. Each slot also has
// an outbox stream and a hold-expiry index (Outbox, Expiry), named with the
// slot's tag: a short fixed string whose own slot is that slot (SlotTag). So
// a script appends to the outbox of the holder's slot, and a worker finds
// every outbox by counting from 0 to Slots-1, without SCAN. Key names are
// built here and nowhere else.
//
// Ids are used as given: callers validate them first. A brace in a holder id
// would move its keys to another slot.
//
// # Caveats
//
// Key and slot maths, and reading a field of an INFO reply (InfoField),
// only: this package is a leaf and starts nothing. The local cluster for
// tests and development is cluster/clustertest.
package cluster
