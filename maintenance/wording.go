package maintenance

import "strings"

// specWords turns the engine's sentences, which name the CLI's flags ("--on-blocked=skip",
// "--timeout 5m", "stop it with Ctrl-C"), into the words of a Maintenance, which names its
// spec's fields ("policy.onBlocked: skip", "drain.timeout 5m", "pause or cancel it"). The
// controller writes its status in these words: its reader set the spec, not flags. The
// engine keeps one wording (the CLI's); this is the one place that translates it, as
// cmd/cli's settingFlags translates the settings' names the other way. Whole sentences
// that only make sense on a command line come first, then each flag.
var specWords = strings.NewReplacer(
	"with no --timeout this run waits until the budget changes; stop it with Ctrl-C (running the same command again resumes), or run it with --timeout or --on-blocked=skip",
	"with no drain.timeout this run waits until the budget changes; pause or cancel the Maintenance (kubectl maintenance pause|cancel), or set drain.timeout or policy.onBlocked: skip",
	"(no --timeout: Ctrl-C stops the run, leaving them cordoned in state failed)",
	"(no drain.timeout: cancelling the Maintenance stops the run, leaving them cordoned)",
	"drain with --surge", "set policy.surge",
	"drain with --ignore-do-not-disrupt", "set drain.ignoreDoNotDisrupt",
	"--on-blocked=skip", "policy.onBlocked: skip",
	"--on-blocked=fail", "policy.onBlocked: fail",
	"--on-blocked=wait", "policy.onBlocked: wait",
	"--on-blocked", "policy.onBlocked",
	"--blocked-after", "policy.blockedAfter",
	"--not-after", "policy.notAfter",
	"--max-parallel-nodes", "policy.maxParallelNodes",
	"--surge", "policy.surge",
	"--skip-wait-for-delete-timeout", "drain.skipWaitForDeleteTimeoutSeconds",
	"--timeout", "drain.timeout",
	"--grace-period", "drain.gracePeriodSeconds",
	"--pod-selector", "drain.podSelector",
	"--include-disrupting", "drain.includeDisrupting",
	"--ignore-do-not-disrupt", "drain.ignoreDoNotDisrupt",
	"--ignore-daemonsets", "drain.ignoreDaemonSets",
	"--delete-emptydir-data", "drain.deleteEmptyDirData",
	"--force", "drain.force",
)

// SpecWording is s in a Maintenance's words: each drain flag named as its spec field
// (specWords). A command line quoted in s (another run's, "(kubectl maintenance drain
// n1 --ignore-daemonsets)", as noderecord names a run) is left as it was typed.
func SpecWording(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "(kubectl maintenance ")
		if j := strings.Index(s, "(kubectl-maintenance "); j >= 0 && (i < 0 || j < i) {
			i = j
		}
		if i < 0 {
			break
		}
		end := closing(s[i:])
		if end < 0 {
			break
		}
		b.WriteString(specWords.Replace(s[:i]))
		b.WriteString(s[i : i+end+1])
		s = s[i+end+1:]
	}
	b.WriteString(specWords.Replace(s))
	return b.String()
}

// closing is the index in s, which opens with "(", of the ")" that closes it (a
// selector's "in (a,b)" inside it is kept whole), or -1.
func closing(s string) int {
	depth := 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
