package operation

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Windows (planned maintenance).

// ConditionMaintenancePlanned is KEP-5683's Node condition for a node that maintenance
// will take soon: True (reason ReasonScheduled) while a Maintenance waits for its window,
// False once it started (ReasonStarted) or will not (ReasonCancelled, ReasonWindowClosed).
const ConditionMaintenancePlanned corev1.NodeConditionType = "MaintenancePlanned"

// Reasons of MaintenancePlanned.
const (
	ReasonScheduled    = "Scheduled"
	ReasonStarted      = "Started"
	ReasonCancelled    = "Cancelled"
	ReasonWindowClosed = "WindowClosed"
)

// PlannedCondition is MaintenancePlanned with status, reason and message.
func PlannedCondition(status bool, reason, msg string) corev1.NodeCondition {
	return cond(ConditionMaintenancePlanned, status, reason, shorten(msg))
}

// PatchNodeConditions writes conds on node's status at now: a strategic merge patch of
// the conditions list (merged by type, field manager kubectl-maintenance), so every other
// condition and status field is left as it is. A node that is gone is no error.
func PatchNodeConditions(ctx context.Context, kube kubernetes.Interface, node string, now time.Time, conds ...corev1.NodeCondition) error {
	if len(conds) == 0 {
		return nil
	}
	t := metav1.NewTime(now)
	list := make([]corev1.NodeCondition, 0, len(conds))
	for _, c := range conds {
		c.LastHeartbeatTime, c.LastTransitionTime = t, t
		list = append(list, c)
	}
	data, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": list}})
	if err != nil {
		return fmt.Errorf("encode the conditions of node %s: %w", node, err)
	}
	_, err = kube.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, data, metav1.PatchOptions{FieldManager: noderecord.FieldManager}, "status")
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patch the conditions of node %s: %w", node, err)
	}
	return nil
}
