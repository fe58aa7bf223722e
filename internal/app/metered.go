package app

import (
	"context"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry"
)

// meteredStore is a Store whose writes to the execution log are timed
// (telemetry's store write latency, by store method); everything else
// passes through. It wraps the store from outside, so that either store
// is measured alike and neither knows of metrics. It is used only when
// metrics are on: off, the store is not wrapped at all.
type meteredStore struct {
	Store
	m *telemetry.Metrics
}

// journaledStore is a meteredStore of a store that has a journal
// (codemode.Journaler), which the runtime finds by a type assertion: the
// capability is kept, and its appends timed too.
type journaledStore struct {
	meteredStore
	j codemode.Journaler
}

// meterStore returns st with its writes timed by m; st itself when m is
// nil.
func meterStore(st Store, m *telemetry.Metrics) Store {
	if m == nil {
		return st
	}
	ms := meteredStore{Store: st, m: m}
	if j, ok := st.(codemode.Journaler); ok {
		return journaledStore{meteredStore: ms, j: j}
	}
	return ms
}

// timed records how long write (store method op) took.
func (s meteredStore) timed(ctx context.Context, op string, write func() error) error {
	start := time.Now()
	err := write()
	s.m.StoreWrite(ctx, op, time.Since(start), err)
	return err
}

func (s meteredStore) CreateExecution(ctx context.Context, e *codemode.Execution) error {
	return s.timed(ctx, "create_execution", func() error { return s.Store.CreateExecution(ctx, e) })
}

func (s meteredStore) UpdateExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, since time.Time) error {
	return s.timed(ctx, "update_execution", func() error { return s.Store.UpdateExecution(ctx, e, from, since) })
}

func (s meteredStore) InsertEntry(ctx context.Context, e codemode.Entry) error {
	return s.timed(ctx, "insert_entry", func() error { return s.Store.InsertEntry(ctx, e) })
}

func (s meteredStore) UpdateEntry(ctx context.Context, e codemode.Entry, from codemode.EntryState) error {
	return s.timed(ctx, "update_entry", func() error { return s.Store.UpdateEntry(ctx, e, from) })
}

func (s meteredStore) WriteEntries(ctx context.Context, inserts []codemode.Entry, updates []codemode.EntryUpdate) error {
	return s.timed(ctx, "write_entries", func() error { return s.Store.WriteEntries(ctx, inserts, updates) })
}

func (s meteredStore) RecoverExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, owner, note string) error {
	return s.timed(ctx, "recover_execution", func() error { return s.Store.RecoverExecution(ctx, e, from, owner, note) })
}

func (s journaledStore) Journal(ctx context.Context, id string, entries []codemode.Entry) error {
	return s.timed(ctx, "journal", func() error { return s.j.Journal(ctx, id, entries) })
}

func (s journaledStore) DropJournal(ctx context.Context, id string) error {
	return s.j.DropJournal(ctx, id)
}
