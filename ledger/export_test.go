package ledger

// StatementQuery is the query of a statement page, for the test of its plan.
const StatementQuery = statementQuery

// InstructionQuery is the query of an instruction by id, for its plan.
const InstructionQuery = instructionQuery

// UnsettledQuery is UnsettledTransfers' query, for its plan at scale.
const UnsettledQuery = unsettledQuery

// AuditFresh is the query of the entries an audit reads, for its plan at scale.
const AuditFresh = auditFresh

// SnapshotAccountsQuery and SnapshotCouponsQuery are Snapshots' reads of the
// tables that grow with history, for their plans.
const (
	SnapshotAccountsQuery = snapshotAccountsQuery
	SnapshotCouponsQuery  = snapshotCouponsQuery
)

// CompactOps and CompactState are the sink's compaction of ops and state,
// for the test that ledger.events gives them back.
var (
	CompactOps   = compactOps
	CompactState = compactState
)

// FeedQueryText and FeedByHolder are the feed's queries, for their plans.
var (
	FeedQueryText = feedQuery
	FeedByHolder  = feedByHolder
)

// HolderLockClass is the first key of the sink's holder locks, for a test
// that holds one.
const HolderLockClass = int32(holderLockClass)

// LanesQuery is the query of a hot holder's lanes, for its plan.
var LanesQuery = lanesQuery

// MergedQuery is the query of a hot holder's statement page, for its plan.
const MergedQuery = mergedQuery
