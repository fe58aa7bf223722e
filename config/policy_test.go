package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/policy"
)

// approvals.approvers, approvals.separation and a connector's approvers
// make the policy; store.audit_retention is read as a duration.
func TestPolicySettings(t *testing.T) {
	src := `approvals:
  separation: true
  approvers:
    groups: [ops]
    subjects: [sub-bob]
store:
  audit_retention: 2160h
connectors:
  notes:
    builtin: notes
  kv:
    builtin: notes
    approvers:
      roles: [kv-admin]
`
	cfg, err := Parse([]byte(src), "codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &policy.Policy{
		Approvers:  policy.Approvers{Subjects: []string{"sub-bob"}, Groups: []string{"ops"}},
		Connectors: map[string]policy.Approvers{"kv": {Roles: []string{"kv-admin"}}},
		Separation: true,
	}
	if diff := cmp.Diff(want, cfg.Policy()); diff != "" {
		t.Errorf("Policy() (-want +got):\n%s", diff)
	}
	if cfg.Store.AuditRetention != 2160*time.Hour {
		t.Errorf("store.audit_retention = %v, want 2160h", cfg.Store.AuditRetention)
	}
	def, err := Parse(nil, "codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&policy.Policy{}, def.Policy()); diff != "" || def.Store.AuditRetention != 0 {
		t.Errorf("default policy (-want +got):\n%s; audit retention %v, want 0 (keep)", diff, def.Store.AuditRetention)
	}

	for _, tc := range []struct{ src, want string }{
		{"approvals:\n  approvers:\n    teams: [x]\n", "approvals.approvers.teams: unknown key"},
		{"approvals:\n  approvers:\n    groups: ops\n", "approvals.approvers.groups"},
		{"approvals:\n  approvers:\n    subjects: ['']\n", "approvals.approvers.subjects[0]"},
		// Approvers listing nobody would be everyone holding codemode:approve
		// (a connector's, in place of a stricter approvals.approvers).
		{"approvals:\n  approvers: {}\n", "codemode.yaml:2:14: approvals.approvers: lists nobody"},
		{"approvals:\n  approvers: {groups: [ops]}\nconnectors:\n  kv:\n    builtin: notes\n    approvers: {}\n", "codemode.yaml:6:5: connectors.kv.approvers: lists nobody"},
		{"store:\n  audit_retention: -1h\n", "store.audit_retention"},
	} {
		_, err := Parse([]byte(tc.src), "codemode.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error naming %s", tc.src, err, tc.want)
		}
	}
}
