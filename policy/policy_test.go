package policy_test

import (
	"errors"
	"slices"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/policy"
)

var (
	alice = &codemode.Principal{Subject: "a", Name: "alice", Scopes: []string{codemode.ScopeRun, codemode.ScopeApprove}}
	bob   = &codemode.Principal{Subject: "b", Name: "bob", Scopes: []string{codemode.ScopeRun, codemode.ScopeApprove}, Groups: []string{"ops"}}
	carol = &codemode.Principal{Subject: "c", Name: "carol", Scopes: []string{codemode.ScopeRun}, Roles: []string{"approver"}}
	dave  = &codemode.Principal{Subject: "d", Name: "dave", Scopes: []string{codemode.ScopeApprove}, Roles: []string{"approver"}}

	alicesRun = &codemode.Execution{ID: "exec_1", Status: codemode.StatusPaused, StartedBy: codemode.Person{Subject: "a"}}
	github    = []codemode.PendingAction{{ExecutionID: "exec_1", Seq: 1, Connector: "github", Method: "createIssue"}}
	both      = append([]codemode.PendingAction{{ExecutionID: "exec_1", Seq: 2, Connector: "notes", Method: "createNote"}}, github...)
	signIn    = []codemode.PendingAction{{ExecutionID: "exec_1", Seq: 1, Connector: "github", Method: "createIssue", Awaits: codemode.AwaitsSignIn}}
	signInAnd = append(slices.Clone(signIn), codemode.PendingAction{ExecutionID: "exec_1", Seq: 2, Connector: "notes", Method: "createNote"})
)

func TestPolicy(t *testing.T) {
	open := &policy.Policy{}
	byGroup := &policy.Policy{Approvers: policy.Approvers{Groups: []string{"ops"}}}
	perConnector := &policy.Policy{Approvers: policy.Approvers{Groups: []string{"ops"}},
		Connectors: map[string]policy.Approvers{"github": {Roles: []string{"approver"}, Subjects: []string{"a"}}}}
	separate := &policy.Policy{Separation: true}

	for _, tc := range []struct {
		name    string
		p       *policy.Policy
		who     *codemode.Principal
		pending []codemode.PendingAction
		sees    bool
		shown   bool   // SeesPending
		approve string // MayApprove's refusal, "" for allowed
		reject  string
	}{
		{"the one user", open, nil, github, true, true, "", ""},
		{"starter, no approvers configured", open, alice, github, true, true, "", ""},
		{"another with the scope, no approvers configured", open, bob, github, false, true, "", ""},
		{"another without the scope", open, carol, github, false, false,
			"carol is not an approver: the token lacks the scope codemode:approve", "carol is not an approver: the token lacks the scope codemode:approve"},
		{"an approver by group", byGroup, bob, github, false, true, "", ""},
		{"the starter, not in the group", byGroup, alice, github, true, true, "alice is not an approver of connector github", ""},
		{"per connector: by role", perConnector, dave, github, false, true, "", ""},
		{"per connector: the group does not approve github", perConnector, bob, github, false, false, "bob is not an approver of connector github", "bob is not an approver of connector github"},
		{"per connector: one of two connectors", perConnector, bob, both, false, true, "bob is not an approver of connector github", "bob is not an approver of connector github"},
		{"per connector: neither", perConnector, dave, both, false, true, "dave is not an approver of connector notes", "dave is not an approver of connector notes"},
		{"per connector: listed subject, starter", perConnector, alice, github, true, true, "", ""},
		{"separation: the starter", separate, alice, github, true, true, "alice started this run; approvals.separation forbids approving one's own run", ""},
		{"separation: another approver", separate, bob, github, false, true, "", ""},
		{"a sign-in: the starter resumes it, not an approver", byGroup, alice, signIn, true, true, "", ""},
		{"a sign-in: the starter resumes it under separation", separate, alice, signIn, true, true, "", ""},
		{"a sign-in: another must be an approver", perConnector, bob, signIn, false, false, "bob is not an approver of connector github", "bob is not an approver of connector github"},
		{"a sign-in and an approval: the approval needs an approver", byGroup, alice, signInAnd, true, true, "alice is not an approver of connector notes", ""},
		{"a sign-in and an approval under separation", separate, alice, signInAnd, true, true, "alice started this run; approvals.separation forbids approving one's own run", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Sees(tc.who, alicesRun); got != tc.sees {
				t.Errorf("Sees = %v, want %v", got, tc.sees)
			}
			if got := tc.p.SeesPending(tc.who, alicesRun, tc.pending); got != tc.shown {
				t.Errorf("SeesPending = %v, want %v", got, tc.shown)
			}
			check := func(what string, err error, want string) {
				t.Helper()
				switch {
				case want == "" && err != nil:
					t.Errorf("%s = %v, want allowed", what, err)
				case want != "" && (err == nil || err.Error() != want):
					t.Errorf("%s = %v, want %q", what, err, want)
				case err != nil && !errors.Is(err, codemode.ErrNotAllowed):
					t.Errorf("%s = %v, does not wrap ErrNotAllowed", what, err)
				}
			}
			check("MayApprove", tc.p.MayApprove(tc.who, alicesRun, tc.pending), tc.approve)
			check("MayReject", tc.p.MayReject(tc.who, alicesRun, tc.pending), tc.reject)
		})
	}
}

// Approvers match exactly, as README says (a subject, or a value of the
// groups or roles claim): no case folding, no globs, no Unicode
// normalisation, so that a value that only looks like a listed one (a
// group an attacker could name "Platform", "plаtform" with a Cyrillic а,
// "*") approves nothing.
func TestApproversMatchExactly(t *testing.T) {
	p := &policy.Policy{Approvers: policy.Approvers{Subjects: []string{"8f1c"}, Groups: []string{"platform", "*"}, Roles: []string{"café"}}}
	for _, who := range []*codemode.Principal{
		{Subject: "8F1C"},
		{Subject: "8f1c "},
		{Subject: "x", Groups: []string{"Platform"}},
		{Subject: "x", Groups: []string{"plаtform"}},
		{Subject: "x", Groups: []string{"platform/"}},
		{Subject: "x", Groups: []string{"any"}},
		{Subject: "x", Roles: []string{"cafe\u0301"}}, // (café decomposed)
		{Subject: "x", Roles: []string{"platform"}},   // (a group's value as a role)
	} {
		who.Scopes = []string{codemode.ScopeApprove}
		if p.Approver(who, "github") {
			t.Errorf("%+v is an approver of %+v", who, p.Approvers)
		}
	}
	for _, who := range []*codemode.Principal{{Subject: "8f1c"}, {Subject: "x", Groups: []string{"platform"}}, {Subject: "x", Roles: []string{"café"}}} {
		who.Scopes = []string{codemode.ScopeApprove}
		if !p.Approver(who, "github") {
			t.Errorf("%+v is not an approver of %+v", who, p.Approvers)
		}
	}
}

// People are their subjects: a run records its starter's subject, not
// the issuer (one server has one, server.auth.issuer), so after the
// issuer changes, a person of the new one whose subject one of the old
// had is that person to the policy. README (People, policy and audit)
// says so; a change of this rule must change what it says.
func TestAPersonIsTheirSubjectWhateverTheIssuer(t *testing.T) {
	before := &codemode.Principal{Issuer: "https://old.example", Subject: "a", Scopes: alice.Scopes}
	after := &codemode.Principal{Issuer: "https://new.example", Subject: "a", Scopes: alice.Scopes}
	run := &codemode.Execution{ID: "exec_2", Status: codemode.StatusPaused, StartedBy: before.Person()}
	p := &policy.Policy{Separation: true}
	if !p.Sees(after, run) {
		t.Error("the same subject under another issuer does not see the run")
	}
	if err := p.MayApprove(after, run, github); !errors.Is(err, codemode.ErrNotAllowed) {
		t.Errorf("the same subject under another issuer approving under separation: %v, want refused as the starter", err)
	}
}
