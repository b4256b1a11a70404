package noderecord

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// RenewHeartbeat renews the heartbeat of run on node in one request, without reading the
// node first: a JSON patch that tests that the node's record names run and that the node
// is still draining, then sets the heartbeat. It fails (the API server answers 422) when
// another run holds the node now, or when the node is no longer draining (the run let it
// go, or uncordon removed the record), so that it never writes a heartbeat back. A run
// holding hundreds of nodes renews each once its heartbeat is HeartbeatInterval old: one
// PATCH instead of a GET and a PATCH halves what the heartbeats take of the client's rate
// limit. Any error means "not renewed": the
// caller reads the node to learn why (Update).
func RenewHeartbeat(ctx context.Context, c corev1client.NodesGetter, node string, run Run, now time.Time) error {
	ops := []map[string]any{
		{"op": "test", "path": annotationPath(AnnotationRun), "value": run.encode()},
		{"op": "test", "path": labelPath(LabelState), "value": StateDraining},
		{"op": "add", "path": annotationPath(AnnotationHeartbeat), "value": now.UTC().Format(time.RFC3339)},
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return fmt.Errorf("encode heartbeat of node %s: %w", node, err)
	}
	if _, err := c.Nodes().Patch(ctx, node, types.JSONPatchType, data, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("renew heartbeat of node %s: %w", node, err)
	}
	return nil
}

// annotationPath and labelPath are the JSON pointers (RFC 6901) of an annotation and a
// label.
func annotationPath(key string) string { return "/metadata/annotations/" + pointerEscape(key) }

func labelPath(key string) string { return "/metadata/labels/" + pointerEscape(key) }

func pointerEscape(key string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(key) }
