package noderecord

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/retry"
)

// maxCommand bounds the recorded command line (a selector of many nodes can make it
// long; annotations are limited to 256 KiB in all).
const maxCommand = 1024

// StatePatch is the metadata of a merge patch that puts a node in state at now: the
// label, the resume annotation and since; run when given (the run that holds the node:
// its ID, command and user); a heartbeat while the run drains the node (StateDraining),
// none otherwise (the run lets the node go); why in AnnotationBlocked or AnnotationFailed
// for StateBlocked and StateFailed, removed otherwise.
func StatePatch(state string, now time.Time, run *Run, why string) map[string]any {
	stamp := now.UTC().Format(time.RFC3339)
	ann := map[string]any{AnnotationSince: stamp, AnnotationHeartbeat: nil, AnnotationBlocked: nil, AnnotationFailed: nil}
	if state != StateCordoned {
		ann[AnnotationDrain] = state
	}
	if run != nil {
		cmd := run.Command
		if len(cmd) > maxCommand {
			cmd = cmd[:maxCommand] + "..."
		}
		ann[AnnotationCommand], ann[AnnotationUser] = nilIfEmpty(cmd), nilIfEmpty(run.User)
		if run.ID != "" {
			ann[AnnotationRun] = run.encode()
			if state == StateDraining {
				ann[AnnotationHeartbeat] = stamp
			}
		}
	}
	switch state {
	case StateBlocked:
		ann[AnnotationBlocked] = why
	case StateFailed:
		ann[AnnotationFailed] = why
	}
	return map[string]any{"labels": map[string]any{LabelState: state}, "annotations": ann}
}

// HeartbeatPatch is the metadata of a patch that renews the heartbeat at now.
func HeartbeatPatch(now time.Time) map[string]any {
	return map[string]any{"annotations": map[string]any{AnnotationHeartbeat: now.UTC().Format(time.RFC3339)}}
}

// RemovePatch is the metadata of a patch that removes the whole record from n (nil when
// n carries none).
func RemovePatch(n *corev1.Node) map[string]any {
	remove := map[string]any{}
	for _, k := range Annotations() {
		if _, ok := n.Annotations[k]; ok {
			remove[k] = nil
		}
	}
	meta := map[string]any{}
	if len(remove) > 0 {
		meta["annotations"] = remove
	}
	if _, ok := n.Labels[LabelState]; ok {
		meta["labels"] = map[string]any{LabelState: nil}
	}
	if len(meta) == 0 {
		return nil
	}
	return meta
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Backoff paces the retries of a node patch whose resourceVersion moved meanwhile
// (kubelets and kwok write node status often).
var Backoff = wait.Backoff{Steps: 10, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.1, Cap: 2 * time.Second}

// Decide looks at the node as it is now and returns the patch to send (a merge patch:
// "metadata" and "spec" keys), or nil for nothing to send. An error stops the update
// (a HeldError, say).
type Decide func(n *corev1.Node) (map[string]any, error)

// Update reads the node, asks decide what to write, and sends it with the node's
// resourceVersion as a precondition; on a conflict it reads the node again and decides
// again, so a write never lands on a node that changed since it was decided. It returns
// the node as written (as read, when there was nothing to write).
func Update(ctx context.Context, c corev1client.NodesGetter, name string, dryRun bool, decide Decide) (*corev1.Node, error) {
	var out *corev1.Node
	err := retry.RetryOnConflict(Backoff, func() error {
		cur, err := c.Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		patch, err := decide(cur)
		if err != nil || patch == nil {
			out = cur
			return err
		}
		meta, _ := patch["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			patch["metadata"] = meta
		}
		meta["resourceVersion"] = cur.ResourceVersion
		out, err = Patch(ctx, c, name, patch, dryRun)
		return err
	})
	return out, err
}

// Patch sends a JSON merge patch as FieldManager; it touches only the keys given (a
// "metadata.resourceVersion" in it makes it conditional).
func Patch(ctx context.Context, c corev1client.NodesGetter, node string, patch map[string]any, dryRun bool) (*corev1.Node, error) {
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encode patch of node %s: %w", node, err)
	}
	opts := metav1.PatchOptions{FieldManager: FieldManager}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	n, err := c.Nodes().Patch(ctx, node, types.MergePatchType, data, opts)
	if err != nil {
		return nil, fmt.Errorf("patch node %s: %w", node, err)
	}
	return n, nil
}
