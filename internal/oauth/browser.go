package oauth

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// EnvBrowser names the variable that says which program opens a URL, as
// xdg-open reads it.
const EnvBrowser = "BROWSER"

// openerGrace is how long closing a Browser waits for the program that
// opened the page to exit before it is killed.
const openerGrace = 10 * time.Second

// A Browser is the program started to open a page. The program is
// expected to return once the page is open (xdg-open, open and rundll32
// do; a browser already running hands the page over and returns); Close
// waits for it for a while, then kills it.
type Browser struct{ cmd *exec.Cmd }

// OpenBrowser opens url in the person's browser: with the commands of
// $BROWSER when it is set (a list separated by ':', each a command whose
// "%s" is replaced by the URL, or which gets the URL as its last argument,
// as xdg-open reads it; the first that starts is used), else with the
// system's opener (xdg-open; open on macOS; rundll32 on Windows).
func OpenBrowser(url string) (*Browser, error) {
	var tried []string
	for _, argv := range browserCommands(os.Getenv(EnvBrowser), url, runtime.GOOS) {
		cmd := exec.Command(argv[0], argv[1:]...)
		if err := cmd.Start(); err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", argv[0], err))
			continue
		}
		return &Browser{cmd: cmd}, nil
	}
	return nil, fmt.Errorf("no program could open the browser (%s); open the URL yourself", strings.Join(tried, "; "))
}

// browserCommands are the command lines to try to open url, in order.
func browserCommands(env, url, goos string) [][]string {
	var out [][]string
	if env != "" {
		for _, entry := range strings.Split(env, ":") {
			fields := strings.Fields(entry)
			if len(fields) == 0 {
				continue
			}
			substituted := false
			for i, f := range fields {
				if strings.Contains(f, "%s") {
					fields[i] = strings.ReplaceAll(strings.ReplaceAll(f, "%s", url), "%%", "%")
					substituted = true
				}
			}
			if !substituted {
				fields = append(fields, url)
			}
			out = append(out, fields)
		}
		return out
	}
	switch goos {
	case "darwin":
		return [][]string{{"open", url}}
	case "windows":
		return [][]string{{"rundll32", "url.dll,FileProtocolHandler", url}}
	}
	return [][]string{{"xdg-open", url}}
}

// Close waits for the program to exit, killing it after openerGrace, and
// reports how it ended.
func (b *Browser) Close() error {
	killer := time.AfterFunc(openerGrace, func() { _ = b.cmd.Process.Kill() })
	err := b.cmd.Wait()
	if !killer.Stop() {
		return errors.New("the browser opener did not exit; it was killed")
	}
	if err != nil {
		return fmt.Errorf("the browser opener %s: %w", b.cmd.Path, err)
	}
	return nil
}
