package typegen

import (
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

func TestMethodPrefix(t *testing.T) {
	tests := []struct{ connector, method, want string }{
		{"everything", "get_sum", "EverythingGetSum"},
		{"memory", "create_entities", "MemoryCreateEntities"},
		{"x", "getItem", "XGetItem"},
		{"x", "get_item", "XGetItem"},
		{"x", "GET__ITEM", "XGETITEM"},
		{"github", "get_repos_owner_repo", "GithubGetReposOwnerRepo"},
		{"a", "get-sum.v2", "AGetSumV2"},
		{"$", "_", "T"},
		{"", "2fa", "T2fa"},
		{"été", "créer", "TCrEr"},
	}
	for _, tc := range tests {
		if got := (namer{}).methodPrefixes(tc.connector, []connectors.Tool{{Name: tc.method}})[0]; got != tc.want {
			t.Errorf("prefix of %q, %q = %q, want %q", tc.connector, tc.method, got, tc.want)
		}
	}
}

func TestPropertyKey(t *testing.T) {
	tests := []struct{ key, want string }{
		{"name", "name"},
		{"_a$1", "_a$1"},
		{"foo-bar", `"foo-bar"`},
		{"1abc", `"1abc"`},
		{"", `""`},
		{"default", `"default"`},
		{"naïve", `"naïve"`},
		{"a\"b\\c\n", `"a\"b\\c\n"`},
		{"\u2028", `"\u2028"`},
		{"\xff", `"\ufffd"`},
	}
	for _, tc := range tests {
		if got := propertyKey(tc.key); got != tc.want {
			t.Errorf("propertyKey(%q) = %s, want %s", tc.key, got, tc.want)
		}
	}
}

func TestValueIdent(t *testing.T) {
	tests := []struct{ name, want string }{
		{"notes", "notes"},
		{"été", "été"},
		{"get-sum", "get_sum"},
		{"2fa", "_2fa"},
		{"delete", "_delete"},
		{"", "_"},
	}
	for _, tc := range tests {
		if got := connectors.Identifier(tc.name); got != tc.want {
			t.Errorf("connectors.Identifier(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLibNames(t *testing.T) {
	for _, n := range []string{"Array", "Promise", "Record", "FileList", "HTMLElement", "MIDIInput", "Intl"} {
		if !libNames[n] {
			t.Errorf("libNames lacks %s", n)
		}
	}
	n := namer{}
	if got := n.unique("FileList"); got != "FileList2" {
		t.Errorf(`unique("FileList") = %q, want "FileList2"`, got)
	}
	if got := n.unique("FileList"); got != "FileList3" {
		t.Errorf(`second unique("FileList") = %q, want "FileList3"`, got)
	}
}
