package ledger

// StatementQuery is the query of a statement page, for the test of its plan.
const StatementQuery = statementQuery

// UnsettledQuery is UnsettledTransfers' query, for its plan at scale.
const UnsettledQuery = unsettledQuery
