// Package storetest is the conformance suite of codemode.Store: every
// implementation must pass Run. It checks the contract the runtime relies
// on, through the interface only: records read back as written,
// conditional updates (exactly one of racing deciders wins, from one
// handle or from several on one database, as a server and the command
// line share one), all-or-nothing log writes, retention, owners and the
// recovery of an execution whose owner is gone, snippets, the records of
// native connectors (connectors.Records) for a store that keeps them, and, for a
// store that has one, the write-ahead journal (codemode.Journaler).
//
// A store package runs it from a test:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Factory{New: …, Another: …})
//	}
package storetest

import (
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Factory opens the stores the suite tests.
type Factory struct {
	// New opens a store on a new, empty database and closes it when t
	// ends.
	New func(t *testing.T) codemode.Store
	// Another opens one more handle on s's database, as another process
	// sharing it would, and closes it when t ends.
	Another func(t *testing.T, s codemode.Store) codemode.Store
}

// Run runs the whole suite, each check as a subtest.
func Run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		run  func(*testing.T, Factory)
	}{
		{"ExecutionRoundTrip", testExecutionRoundTrip},
		{"CreateExecutionErrors", testCreateExecutionErrors},
		{"UpdateExecution", testUpdateExecution},
		{"UpdateExecutionErrors", testUpdateExecutionErrors},
		{"UnknownExecution", testUnknownExecution},
		{"ListExecutions", testListExecutions},
		{"DeleteExecutionCascades", testDeleteExecutionCascades},
		{"PruneExecutions", testPruneExecutions},
		{"PruneRace", testPruneRace},
		{"EntriesRoundTrip", testEntriesRoundTrip},
		{"ClippedEntries", testClippedEntries},
		{"InsertEntryErrors", testInsertEntryErrors},
		{"UpdateEntry", testUpdateEntry},
		{"UpdateEntryRecordsError", testUpdateEntryRecordsError},
		{"EntryTask", testEntryTask},
		{"WriteEntries", testWriteEntries},
		{"WriteEntriesRace", testWriteEntriesRace},
		{"UpdateEntryRace", testUpdateEntryRace},
		{"ClaimRace", testClaimRace},
		{"ConcurrentWriters", testConcurrentWriters},
		{"Owners", testOwners},
		{"RecoverExecution", testRecoverExecution},
		{"RecoverExecutionErrors", testRecoverExecutionErrors},
		{"RecoverRace", testRecoverRace},
		{"Snippets", testSnippets},
		{"People", testPeople},
		{"Audit", testAudit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, f) })
	}
	probe := f.New(t)
	if _, ok := probe.(connectors.Records); ok {
		t.Run("Records", func(t *testing.T) { testRecords(t, f) })
		t.Run("ReplaceRecord", func(t *testing.T) { testReplaceRecord(t, f) })
		t.Run("ReplaceRecordRace", func(t *testing.T) { testReplaceRecordRace(t, f) })
	}
	if _, ok := probe.(codemode.Journaler); !ok {
		return // the journal is optional; a store without one commits instead
	}
	journal := []struct {
		name string
		run  func(*testing.T, Factory)
	}{
		{"JournalIsAppliedByRecovery", testJournalApplied},
		{"JournalNeverUndoes", testJournalNeverUndoes},
		{"DropJournal", testDropJournal},
		{"JournalOfAnotherHandle", testJournalOfAnotherHandle},
		{"JournalErrors", testJournalErrors},
	}
	for _, tt := range journal {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, f) })
	}
}
