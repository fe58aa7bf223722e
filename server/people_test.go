package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/connectors/notes"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/policy"
	rt "github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/server"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// teamServer serves a server whose issuer is as, with policy p, and
// returns a function that makes an MCP client for a person (subject,
// name, scopes), and the store (to read the audit).
func teamServer(t *testing.T, as *oauthtest.Server, p *policy.Policy) (func(sub, name string, scopes ...string) *client.Client, *sqlite.Store) {
	t.Helper()
	person, st := teamServerAsking(t, as, p)
	return func(sub, name string, scopes ...string) *client.Client { return person(sub, name, nil, scopes...) }, st
}

// teamServerAsking is teamServer whose clients answer elicitation with h
// (nil: they do not declare elicitation).
func teamServerAsking(t *testing.T, as *oauthtest.Server, p *policy.Policy) (func(sub, name string, h elicitFunc, scopes ...string) *client.Client, *sqlite.Store) {
	t.Helper()
	var st *sqlite.Store
	s := newServerOf(t, server.Options{Auth: &config.ServerAuth{Issuer: as.Issuer()}, Console: consoleStub(), Elicitation: true}, 0,
		rt.Options{Limits: sandbox.Limits{Timeout: 5 * time.Second}, Policy: p},
		func(s *sqlite.Store, _ *notes.Notes) { st = s })
	base := serve(t, s, server.TransportHTTP)
	return func(sub, name string, h elicitFunc, scopes ...string) *client.Client {
		tok := as.SignJWT("RS256", map[string]any{"aud": base + server.PathMCP, "sub": sub, "name": name, "scope": strings.Join(scopes, " ")})
		return bearerClient(t, base, tok, h)
	}, st
}

const createNote = `async () => notes.createNote({ text: "alice's secret plan" })`

// Alice runs, Bob approves (approvals.approvers names him): Bob does not
// see Alice's runs except as pending approvals (with who started them),
// and another's run is "unknown", never "forbidden"; Bob approves
// Alice's run once and the call records him; the audit lists both people
// and never the call's arguments.
func TestAliceRunsBobApproves(t *testing.T) {
	as := oauthtest.New(t)
	person, st := teamServer(t, as, &policy.Policy{Approvers: policy.Approvers{Subjects: []string{"bob"}}})
	alice := person("alice", "Alice", codemode.ScopeRun, codemode.ScopeApprove, codemode.ScopeAdmin)
	bob := person("bob", "Bob", codemode.ScopeRun, codemode.ScopeApprove, codemode.ScopeAdmin)

	out, _ := call(t, alice, "codemode", map[string]any{"code": createNote})
	id, _ := out["executionId"].(string)
	if out["status"] != "paused" || id == "" {
		t.Fatalf("alice's run: %v", out)
	}
	mine, _ := call(t, bob, "codemode", map[string]any{"code": "return 1"})
	if mine["status"] != "completed" {
		t.Fatalf("bob's run: %v", mine)
	}

	// Bob's executions are his own; Alice's are hers.
	for _, tc := range []struct {
		who  *client.Client
		name string
		want string
	}{{bob, "bob", mine["executionId"].(string)}, {alice, "alice", id}} {
		list, _ := call(t, tc.who, "codemode_executions", map[string]any{})
		runs, _ := list["executions"].([]any)
		if len(runs) != 1 || runs[0].(map[string]any)["executionId"] != tc.want {
			t.Errorf("%s's codemode_executions: %v; want only %s", tc.name, list, tc.want)
			continue
		}
		if by := runs[0].(map[string]any)["startedBy"]; by == nil || by.(map[string]any)["subject"] != tc.name {
			t.Errorf("%s's run is started by %v", tc.name, by)
		}
	}

	// Bob sees Alice's pending action, and who started it.
	pend, _ := call(t, bob, "codemode_pending", map[string]any{})
	list, _ := pend["pending"].([]any)
	if len(list) != 1 {
		t.Fatalf("bob's codemode_pending: %v; want alice's action", pend)
	}
	a := list[0].(map[string]any)
	if a["executionId"] != id || a["connector"] != "notes" || a["startedBy"].(map[string]any)["name"] != "Alice" {
		t.Errorf("bob's pending action: %v", a)
	}

	// Reading or acting on Alice's run whole, Bob is told it is unknown,
	// with no status: the same answer as for a run that does not exist.
	for _, tool := range []string{"codemode_rollback", "codemode_save_snippet"} {
		args := map[string]any{"executionId": id}
		if tool == "codemode_save_snippet" {
			args["name"] = "stolen"
		}
		got, isErr := call(t, bob, tool, args)
		if !isErr || got["status"] != "error" || !strings.Contains(got["error"].(string), `unknown execution "`+id+`"`) {
			t.Errorf("bob's %s of alice's run: %v; want unknown execution, status error", tool, got)
		}
		args["executionId"] = "exec_00000000000000"
		ghost, _ := call(t, bob, tool, args)
		if strings.Replace(got["error"].(string), id, "exec_00000000000000", 1) != ghost["error"] {
			t.Errorf("bob's %s: alice's run %q, a missing one %q; want the same answer", tool, got["error"], ghost["error"])
		}
	}

	// Bob approves once; a second approval is refused.
	done, isErr := call(t, bob, "codemode_approve", map[string]any{"executionId": id})
	if isErr || done["status"] != "completed" {
		t.Fatalf("bob's approval: %v", done)
	}
	if _, told := done["result"]; told || strings.Contains(fmt.Sprint(done), "secret plan") {
		t.Errorf("bob's approval told him the run's result: %v; want its id and status only", done)
	}
	again, isErr := call(t, bob, "codemode_approve", map[string]any{"executionId": id})
	if !isErr || !strings.Contains(again["error"].(string), "unknown execution") {
		t.Errorf("bob's second approval: %v; want unknown (the run is no longer pending, and not his)", again)
	}

	// Alice's run records that Bob decided its call.
	runs, _ := call(t, alice, "codemode_executions", map[string]any{})
	calls := runs["executions"].([]any)[0].(map[string]any)["calls"].([]any)
	if by := calls[0].(map[string]any)["decidedBy"]; by == nil || by.(map[string]any)["subject"] != "bob" {
		t.Errorf("alice's call decided by %v, want bob", by)
	}

	recs, err := st.AuditRecords(context.Background(), codemode.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		line := r.Person.Subject + " " + string(r.Action) + " " + r.Target + " " + strings.SplitN(r.Outcome, ":", 2)[0]
		if r.ExecutionID == id {
			line += " alice's"
		}
		got = append(got, line)
	}
	want := []string{
		"alice run  ok alice's",
		"bob run  ok",
		"bob rollback  refused alice's",
		"bob rollback  refused",
		"bob view  refused alice's",
		"bob view  refused",
		"bob approve notes.createNote ok alice's",
		"bob approve  refused alice's",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b, _ := json.Marshal(recs)
	if strings.Contains(string(b), "secret plan") {
		t.Errorf("the audit holds the call's arguments: %s", b)
	}
}

// With approvals.separation, Alice cannot approve her own run, and is
// told why; she can still reject it. A person who is not an approver of
// the connector is told that, naming it.
func TestSeparationAndApprovers(t *testing.T) {
	as := oauthtest.New(t)
	person, _ := teamServer(t, as, &policy.Policy{Separation: true,
		Connectors: map[string]policy.Approvers{"notes": {Groups: []string{"note-keepers"}}}})
	alice := person("alice", "Alice", codemode.ScopeRun, codemode.ScopeApprove)
	carol := person("carol", "Carol", codemode.ScopeRun, codemode.ScopeApprove)

	out, _ := call(t, alice, "codemode", map[string]any{"code": createNote})
	id := out["executionId"].(string)
	got, isErr := call(t, alice, "codemode_approve", map[string]any{"executionId": id})
	if !isErr || got["status"] != "paused" || !strings.Contains(got["error"].(string), "Alice started this run; approvals.separation forbids approving one's own run") {
		t.Errorf("alice approving her own run: %v", got)
	}
	// Carol is not in note-keepers: she is not shown the action at all.
	pend, _ := call(t, carol, "codemode_pending", map[string]any{})
	if l, _ := pend["pending"].([]any); len(l) != 0 {
		t.Errorf("carol's pending: %v; want none (not an approver of notes)", pend)
	}
	got, _ = call(t, carol, "codemode_approve", map[string]any{"executionId": id})
	if !strings.Contains(got["error"].(string), "unknown execution") {
		t.Errorf("carol approving: %v; want unknown", got)
	}
	got, isErr = call(t, alice, "codemode_reject", map[string]any{"executionId": id})
	if isErr || got["status"] != "rejected" || !strings.Contains(got["error"].(string), "rejected by Alice") {
		t.Errorf("alice rejecting her own run: %v", got)
	}
}

// Under approvals.separation, a task's approval question still reaches
// the client of the person who started it (tasks/result asks it), but her
// acceptance is refused and audited, and the task stays input_required
// until an approver decides: Bob approves it and it completes, the
// note made once.
func TestATaskStartersAcceptanceIsRefusedUnderSeparation(t *testing.T) {
	as := oauthtest.New(t)
	person, st := teamServerAsking(t, as, &policy.Policy{Separation: true})
	asked := &answering{action: mcp.ElicitationResponseActionAccept, told: make(chan struct{}, 1)}
	alice := person("alice", "Alice", elicitFunc(asked.handle), codemode.ScopeRun, codemode.ScopeApprove)
	bob := person("bob", "Bob", nil, codemode.ScopeRun, codemode.ScopeApprove)

	task := createTask(t, alice, createNote)
	pollUntil(t, alice, task.TaskId, mcp.TaskStatusInputRequired)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	result := make(chan error, 1)
	go func() {
		_, err := alice.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
		result <- err
	}()
	fixture.Wait(t, "alice's client being asked", asked.told)
	// Her acceptance is refused: the audit says so, and the task waits.
	var refusal *codemode.AuditRecord
	fixture.Until(t, "an audit record of alice's acceptance", func() bool {
		recs, err := st.AuditRecords(context.Background(), codemode.AuditQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			if r.Action == codemode.AuditApprove && r.ExecutionID == task.TaskId {
				refusal = &recs[i]
			}
		}
		return refusal != nil
	})
	if refusal == nil || refusal.Person.Subject != "alice" || !strings.Contains(refusal.Outcome, "refused") || !strings.Contains(refusal.Outcome, "separation") {
		t.Fatalf("audit of alice's acceptance: %+v; want refused, naming separation", refusal)
	}
	if r := getTask(t, alice, task.TaskId); r.Status != mcp.TaskStatusInputRequired {
		t.Fatalf("after alice's own acceptance: %s %q; want input_required", r.Status, r.StatusMessage)
	}

	// Asked once: her refused acceptance changed nothing, so nothing
	// woke her tasks/result to ask again (it asked in a loop, each
	// refusal audited, while a refused approval claimed the run and gave
	// it back).
	if n := len(asked.questions()); n != 1 {
		t.Errorf("alice was asked %d times; want once", n)
	}
	done, isErr := call(t, bob, "codemode_approve", map[string]any{"executionId": task.TaskId})
	if isErr || done["status"] != "completed" {
		t.Fatalf("bob's approval: %v", done)
	}
	if err := <-result; err != nil {
		t.Errorf("alice's tasks/result: %v", err)
	}
	if r := getTask(t, alice, task.TaskId); r.Status != mcp.TaskStatusCompleted {
		t.Errorf("after bob's approval: %s %q; want completed", r.Status, r.StatusMessage)
	}
	list, _ := call(t, alice, "codemode", map[string]any{"code": `(await notes.listNotes({})).notes.length`})
	if list["result"] != 1.0 {
		t.Errorf("notes after the task: %v, want 1 (the side effect once)", list["result"])
	}
}
