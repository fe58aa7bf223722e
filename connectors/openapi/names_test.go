package openapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMethodName(t *testing.T) {
	tests := []struct {
		id, method, path, want string
	}{
		{"issues/list-for-repo", "GET", "/repos/{owner}/{repo}/issues", "issues_list_for_repo"},
		{"findPetsByStatus", "GET", "/pet/findByStatus", "findPetsByStatus"},
		{"repos/get", "GET", "/repos/{owner}/{repo}", "repos_get"},
		{"", "GET", "/repos/{owner}/{repo}", "get_repos_owner_repo"},
		{"", "DELETE", "/", "_delete"}, // a reserved word
		{"", "POST", "/pets/{id}.json", "post_pets_id_json"},
		{"a  b//c", "GET", "/x", "a_b_c"},
		{"__x__", "GET", "/x", "x"},
		{"1st-thing", "GET", "/x", "_1st_thing"},
		{"delete", "DELETE", "/x", "_delete"},
		{"café/crème", "GET", "/x", "café_crème"},
	}
	for _, tt := range tests {
		op := Operation{SourceName: tt.id, Method: tt.method, Path: tt.path}
		if op.SourceName == "" {
			op.SourceName = tt.method + " " + tt.path
		}
		if got := methodName(&op); got != tt.want {
			t.Errorf("methodName(%q, %s %s) = %q, want %q", tt.id, tt.method, tt.path, got, tt.want)
		}
	}
}

func TestFilter(t *testing.T) {
	ops := []Operation{
		{SourceName: "issues/list", Method: "GET", Path: "/repos/{owner}/{repo}/issues", Tags: []string{"issues"}},
		{SourceName: "issues/create", Method: "POST", Path: "/repos/{owner}/{repo}/issues", Tags: []string{"issues"}},
		{SourceName: "users/get", Method: "GET", Path: "/users/{user}", Tags: []string{"users"}},
		{SourceName: "GET /meta", Method: "GET", Path: "/meta"},
	}
	tests := []struct {
		name             string
		include, exclude []string
		want             []string
	}{
		{"everything", nil, nil, []string{"issues/list", "issues/create", "users/get", "GET /meta"}},
		{"operationId glob", []string{"issues/*"}, nil, []string{"issues/list", "issues/create"}},
		{"method name glob", []string{"issues_c*"}, nil, []string{"issues/create"}},
		{"tag", []string{"tag:users"}, nil, []string{"users/get"}},
		{"tag glob", []string{"tag:i*"}, nil, []string{"issues/list", "issues/create"}},
		{"path with * across segments", []string{"path:/repos/*"}, nil, []string{"issues/list", "issues/create"}},
		{"path exact", []string{"path:/meta"}, nil, []string{"GET /meta"}},
		{"exclude wins", []string{"tag:issues"}, []string{"*create"}, []string{"issues/list"}},
		{"exclude only", nil, []string{"path:*/issues"}, []string{"users/get", "GET /meta"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := newFilter(tt.include, tt.exclude)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := range ops {
				if f.keep(methodName(&ops[i]), &ops[i]) {
					got = append(got, ops[i].SourceName)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := newFilter([]string{"tag:["}, nil); err == nil {
		t.Error("a bad tag glob was accepted")
	}
	if _, err := newFilter(nil, []string{"["}); err == nil {
		t.Error("a bad name glob was accepted")
	}
}
