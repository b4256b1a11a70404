package drain

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
)

// Settings are the user's drain settings and nothing else: no clients, no callbacks, no
// printers (those are Config's wiring). Every front end fills this one type: the CLI
// binds its flags to it, the Maintenance spec converts to and from it
// (maintenance.SettingsFromSpec, maintenance.SpecFromSettings) and the dashboard's
// dialog fills it. Validate is the one validation of each setting.
type Settings struct {
	// Force allows pods without a controller (kubectl drain --force).
	Force bool
	// IgnoreDaemonSets goes on when DaemonSet pods are present (never deleted).
	IgnoreDaemonSets bool
	// DeleteEmptyDirData allows pods with emptyDir volumes (their data is lost).
	DeleteEmptyDirData bool
	// GracePeriodSeconds overrides the pods' grace period; -1 keeps each pod's own.
	GracePeriodSeconds int
	// Timeout bounds the whole drain; 0 means no limit.
	Timeout time.Duration
	// PodSelector restricts the pods evicted (a label selector).
	PodSelector string
	// SkipWaitForDeleteTimeoutSeconds: pods whose deletionTimestamp is older than this
	// are not waited for; 0 waits for every pod.
	SkipWaitForDeleteTimeoutSeconds int
	// ChunkSize pages pod lists. 0: DefaultChunkSize.
	ChunkSize int64
	// DryRun: none, client (nothing sent) or server (sent with dryRun=All).
	DryRun DryRun
	// MaxParallelNodes is how many nodes drain at once (the batch is cordoned first). 0: the default
	// (DefaultMaxParallelNodes, or a pool's maxUnavailable).
	MaxParallelNodes int
	// IgnoreDoNotDisrupt evicts pods annotated karpenter.sh/do-not-disrupt: "true" like
	// any other; by default such a pod is not evicted and its node cannot finish.
	IgnoreDoNotDisrupt bool
	// ClearHolds removes a disruption controller's hold from a budget the drain waits on:
	// the status.disruptedPods entry of a pod that a replacement with the same name
	// succeeded (pdb.Holds), which the controller would otherwise count as disrupted for
	// two minutes. A resourceVersion-guarded status update (holdclear.go); off by
	// default, it needs update on poddisruptionbudgets/status.
	ClearHolds bool
	// Policy: what to do with blocked nodes, deadlines, soak, force and dead nodes.
	Policy
	// Drain order (planned maintenance).
	//
	// DrainOrder are the run's own drain rules (--drain-order, a Maintenance's
	// spec.drain.order), tried in order before Cluster API's MachineDrainRules; a pod's
	// cluster.x-k8s.io/drain label wins over both.
	DrainOrder []drainrule.Rule
	// IgnoreMachineDrainRules does not read Cluster API's MachineDrainRules (read by
	// default, when the API server serves them).
	IgnoreMachineDrainRules bool
	// When a node is drained (quiet.go).
	//
	// WaitForVolumeDetach waits, once a node's pods are gone, until no VolumeAttachment of
	// the node refers to a volume of a pod this drain removed, before the node is drained
	// (on in DefaultSettings: drained means the node may be powered off).
	WaitForVolumeDetach bool
	// Settle is how long after its drain started (its cordon) a node is at the earliest
	// reported drained, after a last look at its pods: a pod bound from a scheduler cache
	// that had not seen the cordon is evicted too. 0: no settle. DefaultSettle in
	// DefaultSettings.
	Settle time.Duration
}

// DefaultSettle is the settle before a node is drained: Karpenter's 5 s after its taint.
const DefaultSettle = 5 * time.Second

// DefaultSettings are kubectl drain's defaults, the settings every front end starts
// from: each pod's own grace period, lists in pages of DefaultChunkSize, no dry run,
// DefaultMaxParallelNodes at once, the volume wait and DefaultSettle. It is the one
// place a setting's default is written: the CLI's flags take it as their defaults,
// maintenance.SettingsFromSpec starts from it, and the zero values the settings define
// as "the default" (ChunkSize, MaxParallelNodes, DryRun) are read from it
// (withZeroDefaults).
func DefaultSettings() Settings {
	return Settings{GracePeriodSeconds: -1, ChunkSize: DefaultChunkSize, DryRun: DryRunNone, MaxParallelNodes: DefaultMaxParallelNodes,
		WaitForVolumeDetach: true, Settle: DefaultSettle}
}

// withZeroDefaults is s with each zero value that the settings define as "the default"
// replaced by that default: ChunkSize, MaxParallelNodes and DryRun by DefaultSettings',
// OnBlocked and BlockedAfter by the policy's (wait, DefaultBlockedAfter). A front end's
// settings start from DefaultSettings and have none of these zeros but a pool drain's
// MaxParallelNodes, which the operations layer replaces by the pool's maxUnavailable
// first; a library caller's Settings{} (the engine's tests) is what this is for. It
// writes no value of its own.
func (s Settings) withZeroDefaults() Settings {
	d := DefaultSettings()
	if s.ChunkSize == 0 {
		s.ChunkSize = d.ChunkSize
	}
	if s.MaxParallelNodes == 0 {
		s.MaxParallelNodes = d.MaxParallelNodes
	}
	if s.DryRun == "" {
		s.DryRun = d.DryRun
	}
	s.fillPolicy()
	return s
}

// The rules, in the words of the CEL rules of the Maintenance CRD (maintenance/api).
const (
	ruleGracePeriod    = "must be -1 (each pod's own) or more"
	ruleTimeout        = "must not be negative (0 means no limit)"
	ruleNotNegative    = "must not be negative"
	ruleMaxParallel    = "must not be negative (0 means the default)"
	ruleDryRun         = `must be "none", "client" or "server"`
	ruleOnBlocked      = "must be wait, skip, fail or force"
	ruleForceNeedsTime = "force needs an explicit forceAfter (how long a pod stays blocked before it is deleted)"
	ruleNeedsForce     = "needs onBlocked force"
	ruleNeverForce     = "must be NAMESPACE/NAME of a budget"
	rulePodSelector    = "must be a label selector"
)

// Validate checks the settings: nil, or a *UsageError with one Mistake (and one
// message) per invalid setting, in the order of the fields. It is the one validation
// of the settings: each front end calls it once, where it says the mistakes in its own
// words (the CLI in DrainOptions.Validate, naming its flags; the controller in
// maintenance.Request, in the spec's), and the engine's door only asserts what it
// found (NewEngine: AssertValid).
func (s Settings) Validate() error { return s.usageError() }

// AssertValid is the engines' door: NewEngine's, and the operations layer's for a
// cordon and an uncordon (they do not go through the engine, but their dry run decides
// whether anything is sent). The settings come validated by their front end, so a
// mistake here is a caller that skipped Settings.Validate (a library caller, a test):
// it is refused all the same, with the settings' own *UsageError, before anything is
// read or changed. A front end never reaches it with a mistake; it says its mistakes
// in its own words first.
func (s Settings) AssertValid() error { return s.usageError() }

// usageError is the mistakes of s as one *UsageError (nil when there is none).
func (s Settings) usageError() error {
	ms := s.mistakes()
	if len(ms) == 0 {
		return nil
	}
	msgs := make([]string, len(ms))
	for i, m := range ms {
		msgs[i] = m.String()
	}
	return &UsageError{msg: strings.Join(msgs, "; "), Mistakes: ms}
}

func (s Settings) mistakes() []Mistake {
	var ms []Mistake
	add := func(setting, rule, value string) {
		ms = append(ms, Mistake{Setting: setting, Rule: rule, Value: value})
	}
	if s.GracePeriodSeconds < -1 {
		add("gracePeriodSeconds", ruleGracePeriod, fmt.Sprint(s.GracePeriodSeconds))
	}
	if s.Timeout < 0 {
		add("timeout", ruleTimeout, s.Timeout.String())
	}
	if _, err := labels.Parse(s.PodSelector); err != nil {
		add("podSelector", rulePodSelector+" ("+err.Error()+")", fmt.Sprintf("%q", s.PodSelector))
	}
	if s.SkipWaitForDeleteTimeoutSeconds < 0 {
		add("skipWaitForDeleteTimeoutSeconds", ruleNotNegative, fmt.Sprint(s.SkipWaitForDeleteTimeoutSeconds))
	}
	if s.ChunkSize < 0 {
		add("chunkSize", ruleNotNegative, fmt.Sprint(s.ChunkSize))
	}
	switch s.DryRun {
	case "", DryRunNone, DryRunClient, DryRunServer:
	default:
		add("dryRun", ruleDryRun, fmt.Sprintf("%q", s.DryRun))
	}
	if s.MaxParallelNodes < 0 {
		add("maxParallelNodes", ruleMaxParallel, fmt.Sprint(s.MaxParallelNodes))
	}
	if s.Settle < 0 {
		add("settle", ruleNotNegative, s.Settle.String())
	}
	ms = append(ms, s.Policy.mistakes()...)
	if _, err := drainrule.Compile(s.DrainOrder); err != nil {
		add("drainOrder", "has a bad rule: "+err.Error(), "")
	}
	return ms
}

// mistakes checks the policy: onBlocked, blockedAfter, soak, and force (force needs an
// explicit forceAfter; forceAfter and neverForce need force).
func (p Policy) mistakes() []Mistake {
	var ms []Mistake
	add := func(setting, rule, value string) {
		ms = append(ms, Mistake{Setting: setting, Rule: rule, Value: value})
	}
	switch p.OnBlocked {
	case "", OnBlockedWait, OnBlockedSkip, OnBlockedFail, OnBlockedForce:
	default:
		add("onBlocked", ruleOnBlocked, fmt.Sprintf("%q", p.OnBlocked))
	}
	if p.BlockedAfter < 0 {
		add("blockedAfter", ruleNotNegative, p.BlockedAfter.String())
	}
	if p.Soak < 0 {
		add("soak", ruleNotNegative, p.Soak.String())
	}
	force := p.OnBlocked == OnBlockedForce
	switch {
	case p.ForceAfter < 0:
		add("forceAfter", ruleNotNegative, p.ForceAfter.String())
	case force && p.ForceAfter == 0:
		add("onBlocked", ruleForceNeedsTime, "")
	case !force && p.ForceAfter > 0:
		add("forceAfter", ruleNeedsForce, "")
	}
	if len(p.NeverForce) > 0 && !force {
		add("neverForce", ruleNeedsForce, "")
	}
	for _, k := range p.NeverForce {
		ns, name, ok := strings.Cut(k, "/")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			add("neverForce", ruleNeverForce, fmt.Sprintf("%q", k))
		}
	}
	return ms
}

// DryRun is the --dry-run mode.
type DryRun string

// Dry-run modes, as kubectl names them.
const (
	DryRunNone   DryRun = "none"
	DryRunClient DryRun = "client"
	DryRunServer DryRun = "server"
)

// Defaults.
const (
	// DefaultMaxParallelNodes is how many nodes drain at once unless told otherwise.
	DefaultMaxParallelNodes = 5
	// DefaultWorkers is how many eviction requests may be in flight at once.
	DefaultWorkers = 16
	// DefaultChunkSize is kubectl drain's list page size.
	DefaultChunkSize = 500
	// DefaultProbeInterval is how often a drain checks that the API server answers.
	DefaultProbeInterval = 10 * time.Second
	// DefaultStaleAfter is how long a gone pod may stay in a PDB's disruptedPods before
	// the budget's status is called stale.
	DefaultStaleAfter = 30 * time.Second
)
