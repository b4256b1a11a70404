package mnttest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// needTmux finds tmux (as e2e/tuitest does): without it the test is skipped, saying so,
// except under CI, where a skip would hide that the dashboard was never driven.
func needTmux(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		const msg = "tmux is not installed: the dashboard's terminal tests need it (apt-get install tmux; .ci/run installs it)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// term is a tmux server of its own (tmux -L) running one command in one session.
type term struct {
	t      *testing.T
	tmux   string
	socket string
}

// startTerm runs cmd in a w x h terminal; "EXITED n" is printed when it ends and the
// pane stays for the test to read.
func startTerm(t *testing.T, name string, w, h int, cmd string) *term {
	t.Helper()
	tm := &term{t: t, tmux: needTmux(t), socket: "km-" + name}
	shell := fmt.Sprintf("%s; echo EXITED $?; sleep 600", cmd)
	tm.run("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), shell)
	tm.run("set-option", "-g", "window-size", "manual")
	t.Cleanup(func() { _ = exec.Command(tm.tmux, "-L", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *term) run(args ...string) {
	tm.t.Helper()
	if out, err := exec.Command(tm.tmux, append([]string{"-L", tm.socket}, args...)...).CombinedOutput(); err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
}

func (tm *term) keys(keys ...string) {
	tm.t.Helper()
	tm.run(append([]string{"send-keys", "-t", "main"}, keys...)...)
}

func (tm *term) screen() string {
	out, _ := exec.Command(tm.tmux, "-L", tm.socket, "capture-pane", "-p", "-t", "main").CombinedOutput()
	return string(out)
}

// waitFor polls the screen every 200 ms until it shows want, for at most limit.
func (tm *term) waitFor(want string, limit time.Duration) string {
	tm.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := tm.screen()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen never showed %q within %s; it shows:\n%s", want, limit, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
