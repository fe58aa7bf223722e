package tscheck

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// realChecker returns a Checker of tsgo or tsc on PATH, else of the
// end-to-end suite's tsc (e2e/node_modules, once `npm ci` ran there).
// Without one the test is skipped, or fails under CI (scripts/test.sh runs
// `npm ci` in e2e/ before the Go tests).
func realChecker(t *testing.T) *Checker {
	t.Helper()
	if c, err := Find(nil); err == nil {
		return c
	}
	local, err := filepath.Abs(filepath.Join("..", "..", "e2e", "node_modules", ".bin", "tsc"))
	if err == nil {
		if _, err := os.Stat(local); err == nil {
			return newChecker(local, nil)
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no tsgo or tsc on PATH, nor in e2e/node_modules (npm ci in e2e/)")
	}
	t.Skip("no tsgo or tsc on PATH, nor in e2e/node_modules (npm ci in e2e/)")
	return nil
}

// sharedDir returns a new directory that any user may read, for files a
// checker reads: a checker started by root runs as nobody.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tscheck-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// secretFile writes a TypeScript file holding a secret of its own into a
// directory any user may read (the check must refuse it all the same),
// and returns the file's path without its extension, and the secret.
func secretFile(t *testing.T) (module, secret string) {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	secret = "SECRET-" + hex.EncodeToString(b[:])
	dir := sharedDir(t)
	text := "export const key = { value: \"" + secret + "\" } as const;\nexport declare const typed: \"" + secret + "\";\n"
	if err := os.WriteFile(filepath.Join(dir, "secret.ts"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "secret"), secret
}

// A program that names a TypeScript file of the server's — by an import
// type, an import declaration or a reference directive — does not make
// the checker read it: the program is refused (the module is not found)
// and nothing of the file appears in what the check says.
func TestCheckReadsNoFileOfTheServer(t *testing.T) {
	c := realChecker(t)
	module, secret := secretFile(t)
	tests := []struct {
		name, code string
		refused    bool // the check reports a type error
	}{
		{"import type", `const a: number = (null as any as typeof import("` + module + `")).key;`, true},
		{"import type with extension", `const a: number = (null as any as typeof import("` + module + `.ts")).typed;`, true},
		{"import declaration", "import type { key } from \"" + module + "\";\nconst a: number = (null as any as typeof key);", true},
		{"reference directive", "/// <reference path=\"" + module + ".ts\" />\nconst a: number = key;", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems, err := c.Check(context.Background(), tt.code, "declare const codemode: {};\n")
			said := strings.Join(problems, "\n")
			if err != nil {
				said += "\n" + err.Error()
			}
			if strings.Contains(said, secret) {
				t.Fatalf("the check shows the secret file's contents:\n%s", said)
			}
			if tt.refused && len(problems) == 0 {
				t.Errorf("the program was not refused (problems none, err %v)", err)
			}
			t.Logf("%s", said)
		})
	}
}

// fakeChecker writes a shell script acting as the checker, in a directory
// any user may read and run from.
func fakeChecker(t *testing.T, script string) *Checker {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	bin := filepath.Join(sharedDir(t), "tsc")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return newChecker(bin, nil)
}

// A checker that read a file besides the program, its declarations and
// its library is refused, and nothing of its output is shown, not even a
// type error of the program that quotes that file.
func TestCheckRefusesAFileOutside(t *testing.T) {
	c := fakeChecker(t, `echo "program.ts(3,7): error TS2322: Type 'SECRET-1' is not assignable to type 'number'."
echo /usr/lib/node_modules/typescript/lib/lib.es5.d.ts
echo "$PWD/connectors.d.ts"
echo program.ts
echo /srv/app/secret.ts
exit 2
`)
	problems, err := c.Check(context.Background(), "const a: number = 1;", "")
	if err == nil || len(problems) != 0 {
		t.Fatalf("problems %q, err %v; want the check refused", problems, err)
	}
	if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "/srv/app") {
		t.Errorf("the error shows the checker's output: %v", err)
	}
}

// A failed check shows the errors that name no file and those of its own
// configuration, never a line about another file.
func TestCheckerFailureQuotesNoFile(t *testing.T) {
	c := fakeChecker(t, `echo "/srv/app/secret.ts(1,14): error TS2322: Type 'SECRET-2' is not assignable to type 'number'."
echo "tsconfig.json(1,2): error TS5023: Unknown compiler option 'x'."
echo "error TS6053: File 'y' not found."
exit 1
`)
	_, err := c.Check(context.Background(), "const a = 1;", "")
	if err == nil {
		t.Fatal("the check succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "SECRET") {
		t.Errorf("the error quotes another file: %v", err)
	}
	for _, want := range []string{"TS5023", "TS6053"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error %q does not show %s", msg, want)
		}
	}
}

// The checker runs as a worker does: only PATH (and Node's heap cap) in
// its environment, in the check's own directory, in a process group of
// its own, and as nobody when the server runs as root.
func TestCheckerIsConfined(t *testing.T) {
	t.Setenv("CODEMODE_TOKEN", "not-for-the-checker")
	c := fakeChecker(t, `echo "program.ts(3,1): error TS9999: uid=$(id -u) dir=$PWD pgid=$(ps -o pgid= -p $$ | tr -d ' ') pid=$$ env=$(env | cut -d= -f1 | sort | tr '\n' ,)"
exit 2
`)
	problems, err := c.Check(context.Background(), "1", "")
	if err != nil || len(problems) != 1 {
		t.Fatalf("problems %q, err %v", problems, err)
	}
	got := problems[0]
	t.Log(got)
	fields := map[string]string{}
	for _, f := range strings.Fields(got[strings.Index(got, "uid="):]) {
		k, v, _ := strings.Cut(f, "=")
		fields[k] = v
	}
	if os.Geteuid() == 0 && fields["uid"] != "65534" {
		t.Errorf("started by root, the checker runs as uid %s, want nobody (65534)", fields["uid"])
	}
	if !strings.Contains(filepath.Base(fields["dir"]), "codemode-typecheck-") {
		t.Errorf("the checker runs in %s, want the check's own directory", fields["dir"])
	}
	if fields["pgid"] != fields["pid"] {
		t.Errorf("the checker's process group is %s, want its own (%s)", fields["pgid"], fields["pid"])
	}
	for _, name := range strings.Split(strings.Trim(fields["env"], ","), ",") {
		switch name {
		case "PATH", "NODE_OPTIONS", "PWD", "SHLVL", "_", "OLDPWD":
		default:
			t.Errorf("the checker's environment has %s", name)
		}
	}
}

// A checker's output is read up to a bound: past it the checker is
// stopped and the program refused, however much it would have written.
func TestCheckOutputIsBounded(t *testing.T) {
	c := fakeChecker(t, `yes "program.ts(3,1): error TS2304: Cannot find name 'x'." | head -c 16000000
exit 2
`)
	problems, err := c.Check(context.Background(), "x;", "")
	if err == nil || len(problems) != 0 || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("%d problems, err %v; want the check refused for its output's size", len(problems), err)
	}
}
