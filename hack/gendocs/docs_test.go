package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// pendingDocs are files the docs may link to before they exist: written in parallel by
// another change. Once a file exists, its link is checked like any other.
var pendingDocs = map[string]bool{
	"docs/security.md": true,
}

// TestDocsCommandsParse checks that every "kubectl maintenance ..." command line in a
// fenced block of README.md and docs/*.md names a real command and only flags it has,
// against the command tree the binary runs (nothing is executed).
func TestDocsCommandsParse(t *testing.T) {
	root := newRoot()
	files := append([]string{"README.md"}, globT(t, "docs/*.md")...)
	n := 0
	for _, f := range files {
		for _, cl := range commandLines(t, f) {
			n++
			t.Run(fmt.Sprintf("%s:%d", f, cl.line), func(t *testing.T) {
				if err := checkCommand(root, cl.args); err != nil {
					t.Errorf("%s:%d: %q: %v", f, cl.line, strings.Join(cl.args, " "), err)
				}
			})
		}
	}
	if n < 20 {
		t.Fatalf("found only %d command lines in the docs: is the extraction broken?", n)
	}
}

// TestCheckCommand shows what checkCommand accepts and refuses.
func TestCheckCommand(t *testing.T) {
	root := newRoot()
	cases := map[string]struct {
		args    []string
		wantErr string
	}{
		"a command with its flags and values":    {args: []string{"drain", "node-1", "--ignore-daemonsets", "--timeout", "5m"}},
		"a flag given with =":                    {args: []string{"drain", "-l", "rack=7", "--on-blocked=skip"}},
		"an inherited cluster flag":              {args: []string{"pool", "move", "n1", "--to", "blue", "--kubeconfig", "/k"}},
		"a shorthand":                            {args: []string{"status", "-o", "wide", "-w"}},
		"an alias":                               {args: []string{"ui"}},
		"a mistyped command":                     {args: []string{"drian", "node-1"}, wantErr: `unknown command "drian"`},
		"a mistyped subcommand":                  {args: []string{"pool", "mvoe", "n1"}, wantErr: `unknown command "mvoe"`},
		"a flag the command does not have":       {args: []string{"cordon", "n1", "--surge"}, wantErr: `unknown flag --surge`},
		"a shorthand the command does not have":  {args: []string{"uncordon", "-o", "json"}, wantErr: `unknown shorthand flag -o`},
		"a flag of another command's subcommand": {args: []string{"pool", "list", "--to", "x"}, wantErr: `unknown flag --to`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkCommand(root, tc.args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("checkCommand(%q) = %v, want no error", tc.args, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("checkCommand(%q) = %v, want an error containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
}

// TestDocsLinksResolve checks that every relative link in README.md and docs/**/*.md
// points at a file that exists.
func TestDocsLinksResolve(t *testing.T) {
	files := []string{"README.md", "CHANGELOG.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		for _, l := range relativeLinks(t, f) {
			n++
			target := f
			if l.target != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(f), l.target))
			}
			if pendingDocs[target] {
				continue
			}
			if _, err := os.Stat(filepath.Join(repoRoot, target)); err != nil {
				t.Errorf("%s:%d: link %q: %s does not exist", f, l.line, l.target, target)
				continue
			}
			if l.anchor != "" && strings.HasSuffix(target, ".md") && !anchors(t, target)[l.anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading #%s", f, l.line, l.target+"#"+l.anchor, target, l.anchor)
			}
		}
	}
	if n < 10 {
		t.Fatalf("found only %d relative links: is the extraction broken?", n)
	}
}

// shellFences are the info strings of fenced blocks that hold shell commands.
var shellFences = map[string]bool{"sh": true, "bash": true, "shell": true}

// commandLine is one "kubectl maintenance" invocation found in a document.
type commandLine struct {
	line int
	args []string // after "kubectl maintenance"
}

// commandLines returns the "kubectl maintenance ..." invocations in the fenced blocks of
// file (relative to the repository's root): the lines of sh blocks and "$ " prompts in any
// block, the right-hand side of a pipe and xargs included; comments and redirections cut.
func commandLines(t *testing.T, file string) []commandLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	var out []commandLine
	fenced, shell := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for i := 1; sc.Scan(); i++ {
		text := sc.Text()
		if fence, ok := strings.CutPrefix(strings.TrimSpace(text), "```"); ok {
			fenced = !fenced
			shell = fenced && shellFences[fence]
			continue
		}
		if !fenced {
			continue
		}
		// In a shell block every line is a command; elsewhere (output, console) only
		// a line after a "$ " prompt is.
		prompt, isPrompt := strings.CutPrefix(strings.TrimSpace(text), "$ ")
		switch {
		case isPrompt:
			text = prompt
		case !shell:
			continue
		}
		words := shellWords(text)
		for j := 0; j+1 < len(words); j++ {
			if words[j] != "kubectl" || words[j+1] != "maintenance" {
				continue
			}
			var args []string
			for _, w := range words[j+2:] {
				if w == "|" || w == ";" || w == "&&" || w == ">" || w == "<" {
					break
				}
				args = append(args, w)
			}
			out = append(out, commandLine{line: i, args: args})
		}
	}
	return out
}

// shellWords splits a line as a shell would, roughly: quotes group, an unquoted "#" after
// a blank starts a comment, and | ; && > < are words of their own.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && !inWord:
			return words
		case r == '|' || r == ';' || r == '>' || r == '<':
			flush()
			words = append(words, string(r))
		case r == '&' && strings.HasPrefix(line[i:], "&&"):
			flush()
			words = append(words, "&&")
		case r == '&':
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return words
}

// checkCommand finds args' command in root's tree (cobra's Find) and looks up each of its
// flags there, local or inherited. A word that is not a flag where the command has
// subcommands and takes no positional argument of its own is an unknown command.
func checkCommand(root *cobra.Command, args []string) error {
	cmd, rest, err := root.Find(args)
	if err != nil {
		return fmt.Errorf("find: %w", err)
	}
	cmd.InheritedFlags() // merges the parents' persistent flags into cmd.Flags()
	fs := cmd.Flags()
	positional := 0
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		switch {
		case w == "--":
			return nil
		case strings.HasPrefix(w, "--"):
			name, _, hasValue := strings.Cut(w[2:], "=")
			f := fs.Lookup(name)
			if f == nil {
				return fmt.Errorf("unknown flag --%s for %q", name, cmd.CommandPath())
			}
			if !hasValue && takesValue(f) {
				i++
			}
		case strings.HasPrefix(w, "-") && len(w) > 1:
			short := w[1:2]
			f := fs.ShorthandLookup(short)
			if f == nil {
				return fmt.Errorf("unknown shorthand flag -%s for %q", short, cmd.CommandPath())
			}
			if len(w) == 2 && takesValue(f) {
				i++
			}
		default:
			if positional == 0 && cmd.HasAvailableSubCommands() {
				return fmt.Errorf("unknown command %q for %q", w, cmd.CommandPath())
			}
			positional++
		}
	}
	return nil
}

// takesValue reports whether the flag consumes the next word when given without "=".
func takesValue(f *pflag.Flag) bool { return f.NoOptDefVal == "" }

// link is one relative link of a document.
type link struct {
	line   int
	target string // "" for an in-page anchor
	anchor string // "" for none
}

// mdLink matches an inline Markdown link or image: [text](target) or ![alt](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// codeSpan matches an inline code span, where brackets are text (a pattern such as
// `^[a-z]([-a-z]*)$` in the API reference), not a link.
var codeSpan = regexp.MustCompile("`[^`]*`")

// relativeLinks returns file's links that are not URLs, each with its fragment apart,
// skipping fenced blocks and code spans.
func relativeLinks(t *testing.T, file string) []link {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	var out []link
	fenced := false
	for i, text := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(text), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(text, "``"), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(target, "#")
			out = append(out, link{line: i + 1, target: target, anchor: anchor})
		}
	}
	return out
}

// anchors returns the anchors GitHub makes of file's headings: lower case, punctuation
// but hyphens dropped, blanks made hyphens, a repeated one suffixed -1, -2, ...
func anchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	out := map[string]bool{}
	fenced := false
	for _, text := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(text), "```") {
			fenced = !fenced
		}
		heading, ok := strings.CutPrefix(strings.TrimLeft(text, "#"), " ")
		if fenced || !strings.HasPrefix(text, "#") || !ok {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// globT is filepath.Glob under the repository's root, relative names.
func globT(t *testing.T, pattern string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(repoRoot, pattern))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range matches {
		rel, err := filepath.Rel(repoRoot, m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	if len(out) == 0 {
		t.Fatal(errors.New("no file matches " + pattern))
	}
	return out
}
