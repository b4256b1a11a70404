package noderecord

import "strings"

// secretFlags are kubectl's flags whose values are credentials: never recorded.
var secretFlags = map[string]bool{"--token": true, "--password": true, "--username": true, "--client-key": true}

// SecretFlag reports whether flag ("--token") takes a credential as its value: a command
// line recorded on a node, or printed for a person to run, never shows it.
func SecretFlag(flag string) bool { return secretFlags[flag] }

// CommandLine is the Run's Command of a command run as args (os.Args): "kubectl
// maintenance" and the arguments, with credentials masked.
func CommandLine(args []string) string {
	out := []string{"kubectl maintenance"}
	if len(args) == 0 {
		return out[0]
	}
	mask := false
	for _, a := range args[1:] {
		switch {
		case mask:
			a, mask = "***", false
		case secretFlags[a]:
			mask = true
		default:
			if name, _, ok := strings.Cut(a, "="); ok && secretFlags[name] {
				a = name + "=***"
			}
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
