package access

import (
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestUserFromKubeconfig(t *testing.T) {
	raw := clientcmdapi.Config{CurrentContext: "dev", Contexts: map[string]*clientcmdapi.Context{
		"dev": {AuthInfo: "dev-user"}, "prod": {AuthInfo: "prod-admin"}}}
	loader := clientcmd.NewDefaultClientConfig(raw, &clientcmd.ConfigOverrides{})
	tests := map[string]struct {
		cfg     *rest.Config
		context string
		want    string
	}{
		"the impersonated user first":           {cfg: &rest.Config{Impersonate: rest.ImpersonationConfig{UserName: "jane"}}, want: "jane"},
		"else the current context's user entry": {cfg: &rest.Config{BearerToken: "t"}, want: "dev-user"},
		"--context's user entry when given":     {context: "prod", want: "prod-admin"},
		"an unknown context names nobody":       {context: "staging", want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := UserFromKubeconfig(tc.cfg, loader, tc.context); got != tc.want {
				t.Errorf("UserFromKubeconfig = %q, want %q", got, tc.want)
			}
		})
	}
}
