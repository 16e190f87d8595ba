// Package cluster owns where data lives in Redis Cluster: key names, hash
// tags, slot maths, and a local cluster of real servers for tests and
// development.
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
// # Local cluster
//
// Start runs real redis-server processes on free ports of 127.0.0.1, joins
// them into a cluster with CLUSTER MEET, ADDSLOTSRANGE and REPLICATE, and
// returns once every node agrees on the slot map and every replica is in
// sync. Kill, WaitFailover and Restart drive a failover the way a crash
// would. Nodes time out after one second, so a failover takes about two.
//
// Tests use StartForTest (or StartForMain from TestMain). When the
// environment variable ATOMLEDGER_TEST_REDIS names the nodes of a running
// cluster, they use that cluster instead of starting one.
//
// # Caveats
//
// The local cluster keeps no data on disk (no RDB, no AOF): a restarted node
// comes back empty and resyncs from its master, and data not yet replicated
// when a master was killed is lost, as in production with asynchronous
// replication. On Linux the servers die with the process that started them,
// even if it never calls Stop.
package cluster
