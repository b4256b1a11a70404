package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
)

// The disruption controller's own figures, from kube-controller-manager's metrics: its
// workqueue "disruption" (one worker) counts the budgets it synced and the time it spent
// on them, the status write through its rate-limited client included.

// queueBusy is a reading of the disruption controller's queue: syncs done and the seconds
// the worker spent in them (workqueue_work_duration_seconds count and sum).
type queueBusy struct {
	Syncs   float64
	BusySec float64
}

// kcmScraper reads kube-controller-manager's /metrics on its secure port with a service
// account's token (kube-controller-manager authenticates bearer tokens through the API
// server's TokenReview and authorizes them through RBAC; it has no client CA here).
type kcmScraper struct {
	url, token string
	client     *http.Client
}

// metricsReader is the service account, role and binding the scraper reads as.
const metricsReader = "km-bench-metrics-reader"

// newKCMScraper finds kube-controller-manager's secure port on its command line and gets a
// token allowed to read /metrics.
func newKCMScraper(ctx context.Context, c *cluster.Cluster) (*kcmScraper, error) {
	token, err := metricsToken(ctx, c.Client)
	if err != nil {
		return nil, err
	}
	pid, err := c.PID(cluster.ControllerManager)
	if err != nil || pid == 0 {
		return nil, fmt.Errorf("kube-controller-manager's process: %v", err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager's command line: %w", err)
	}
	args := strings.Split(string(b), "\x00")
	port := ""
	for i, a := range args {
		switch {
		case a == "--secure-port" && i+1 < len(args):
			port = args[i+1]
		case strings.HasPrefix(a, "--secure-port="):
			port = strings.TrimPrefix(a, "--secure-port=")
		}
	}
	if port == "" {
		return nil, fmt.Errorf("kube-controller-manager's command line has no --secure-port")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // loopback, its serving certificate is self-signed
	return &kcmScraper{url: "https://127.0.0.1:" + port + "/metrics", token: token, client: &http.Client{Transport: tr, Timeout: 10 * time.Second}}, nil
}

// metricsToken creates (or finds) the service account metricsReader in kube-system, lets it
// get /metrics, and returns a token of it valid for a day.
func metricsToken(ctx context.Context, c kubernetes.Interface) (string, error) {
	meta := metav1.ObjectMeta{Name: metricsReader, Namespace: metav1.NamespaceSystem}
	if _, err := c.CoreV1().ServiceAccounts(meta.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create service account %s: %w", metricsReader, err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: metricsReader},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create cluster role %s: %w", metricsReader, err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: metricsReader},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReader},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: metricsReader, Namespace: meta.Namespace}}}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create cluster role binding %s: %w", metricsReader, err)
	}
	tr, err := c.CoreV1().ServiceAccounts(meta.Namespace).CreateToken(ctx, metricsReader,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](86400)}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of %s: %w", metricsReader, err)
	}
	return tr.Status.Token, nil
}

// disruption reads the disruption controller's queue.
func (s *kcmScraper) disruption(ctx context.Context) (queueBusy, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return queueBusy{}, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		return queueBusy{}, fmt.Errorf("scrape kube-controller-manager: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return queueBusy{}, fmt.Errorf("scrape kube-controller-manager: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return queueBusy{}, fmt.Errorf("scrape kube-controller-manager: %s: %.200s", resp.Status, b)
	}
	return parseQueueBusy(b, "disruption"), nil
}

// parseQueueBusy reads workqueue_work_duration_seconds_{count,sum} of the queue named
// queue from a metrics text.
func parseQueueBusy(text []byte, queue string) queueBusy {
	var q queueBusy
	label := `name="` + queue + `"`
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		var dst *float64
		switch {
		case strings.HasPrefix(l, "workqueue_work_duration_seconds_count{"):
			dst = &q.Syncs
		case strings.HasPrefix(l, "workqueue_work_duration_seconds_sum{"):
			dst = &q.BusySec
		default:
			continue
		}
		if !strings.Contains(l, label) {
			continue
		}
		f := strings.Fields(l)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			*dst = v
		}
	}
	return q
}

// disruptionQueue reads the disruption controller's queue, or says why not (no scraper).
func (f *fleet) disruptionQueue(ctx context.Context) (queueBusy, error) {
	if f.kcm == nil {
		return queueBusy{}, errors.New("no kube-controller-manager metrics")
	}
	return f.kcm.disruption(ctx)
}
