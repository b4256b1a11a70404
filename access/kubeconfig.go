package access

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// UserFromKubeconfig names the user as far as the kubeconfig can tell, for when the API
// server will not say (WhoAmI's fallback): the user cfg authenticates as
// (UserFromConfig: the impersonated or basic-auth user, the client certificate's name),
// else the user entry of the kubeconfig's context (context, when given, else the
// current one). "" when neither tells.
func UserFromKubeconfig(cfg *rest.Config, loader clientcmd.ClientConfig, context string) string {
	if u := UserFromConfig(cfg); u != "" {
		return u
	}
	raw, err := loader.RawConfig()
	if err != nil {
		return ""
	}
	if context == "" {
		context = raw.CurrentContext
	}
	if kc := raw.Contexts[context]; kc != nil {
		return kc.AuthInfo
	}
	return ""
}
