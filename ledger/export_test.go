package ledger

// StatementQuery is the query of a statement page, for the test of its plan.
const StatementQuery = statementQuery
