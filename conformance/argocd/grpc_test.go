package argocd

import (
	"context"
	"fmt"
	"testing"

	pluginclient "github.com/argoproj/argo-cd/v3/cmpserver/apiclient"
	"github.com/argoproj/argo-cd/v3/util/cmp"
	utilio "github.com/argoproj/argo-cd/v3/util/io"
)

// The cmp-server's gRPC API, driven directly: the calls the repo-server makes, with an
// environment the test chooses exactly.

func dial(s *sidecar) (pluginclient.ConfigManagementPluginServiceClient, utilio.Closer, error) {
	closer, client, err := pluginclient.NewConfigManagementPluginClientSet(s.socket()).NewConfigManagementPluginClient()
	if err != nil {
		return nil, nil, fmt.Errorf("dialling %s: %w", s.socket(), err)
	}
	return client, closer, nil
}

func mustDial(t *testing.T, s *sidecar) pluginclient.ConfigManagementPluginServiceClient {
	t.Helper()
	client, closer, err := dial(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { utilio.Close(closer) })
	return client
}

// pluginEnv is the environment the repo-server builds for a plugin (newEnv, then
// KUBE_VERSION and KUBE_API_VERSIONS), before env entries and parameters.
func pluginEnv() []string {
	return []string{
		"ARGOCD_APP_NAME=" + appName,
		"ARGOCD_APP_NAMESPACE=" + appNS,
		"ARGOCD_APP_PROJECT_NAME=default",
		"ARGOCD_APP_REVISION=" + revision,
		"ARGOCD_APP_REVISION_SHORT=" + revision[:7],
		"ARGOCD_APP_REVISION_SHORT_8=" + revision[:8],
		"ARGOCD_APP_SOURCE_REPO_URL=" + repoURL,
		"ARGOCD_APP_SOURCE_PATH=" + appPath,
		"ARGOCD_APP_SOURCE_TARGET_REVISION=main",
		"KUBE_VERSION=1.33.2",
		"KUBE_API_VERSIONS=v1,apps/v1",
	}
}

// grpcGenerate streams the repository to GenerateManifest and returns the manifests.
func grpcGenerate(ctx context.Context, s *sidecar, r *repo, env []string) ([]string, error) {
	client, closer, err := dial(s)
	if err != nil {
		return nil, err
	}
	defer utilio.Close(closer)
	stream, err := client.GenerateManifest(ctx)
	if err != nil {
		return nil, err
	}
	if err := cmp.SendRepoStream(ctx, r.app(), r.root, stream, env, nil); err != nil {
		return nil, err
	}
	response, err := stream.CloseAndRecv()
	if err != nil {
		return nil, err
	}
	return response.GetManifests(), nil
}

// grpcMatch asks MatchRepository, which runs plugin.yaml's discovery.
func grpcMatch(ctx context.Context, s *sidecar, r *repo) (supported, discoveryEnabled bool, err error) {
	client, closer, err := dial(s)
	if err != nil {
		return false, false, err
	}
	defer utilio.Close(closer)
	stream, err := client.MatchRepository(ctx)
	if err != nil {
		return false, false, err
	}
	if err := cmp.SendRepoStream(ctx, r.app(), r.root, stream, pluginEnv(), nil); err != nil {
		return false, false, err
	}
	response, err := stream.CloseAndRecv()
	if err != nil {
		return false, false, err
	}
	return response.GetIsSupported(), response.GetIsDiscoveryEnabled(), nil
}

// grpcAnnouncement asks GetParametersAnnouncement, what the UI shows as the parameters.
func grpcAnnouncement(ctx context.Context, s *sidecar, r *repo) (*pluginclient.ParametersAnnouncementResponse, error) {
	client, closer, err := dial(s)
	if err != nil {
		return nil, err
	}
	defer utilio.Close(closer)
	stream, err := client.GetParametersAnnouncement(ctx)
	if err != nil {
		return nil, err
	}
	if err := cmp.SendRepoStream(ctx, r.app(), r.root, stream, pluginEnv(), nil); err != nil {
		return nil, err
	}
	return stream.CloseAndRecv()
}
