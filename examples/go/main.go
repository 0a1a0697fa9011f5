// gke-gpu from Go on a cluster it does not create (kubeadm, another cloud, an existing GKE
// cluster): a Kubernetes provider from your kubeconfig, and NVIDIA's CUDA vector-add sample as a
// Job that gets one GPU, through the gke-gpu component package. The same program as
// examples/yaml-existing/Pulumi.yaml.
//
//	pulumi package add github.com/OWNER/gke-gpu/provider@v0.2.0   # the SDK, in sdks/gke-gpu (docs/package.md)
//	pulumi stack init existing
//	pulumi config set --secret kubeconfig "$(cat ~/.kube/config)"
//	pulumi up
//	kubectl -n gke-gpu logs job/vector-add                          # "Test PASSED"
//
// go.mod's replace points the SDK's module at sdks/gke-gpu, where `pulumi package add` writes it.
// tests/real/test_package_sdks.py builds this program against the SDK Pulumi's Go generator
// writes from the schema the package serves.
package main

import (
	gkegpu "github.com/gke-gpu/gke-gpu/sdk/go/gkegpu"
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	corev1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/core/v1"
	metav1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/meta/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		// The provider everything below is deployed with. Only another cluster replaces it (and
		// everything deployed through it), not a kubeconfig whose credentials change.
		cluster, err := kubernetes.NewProvider(ctx, "cluster", &kubernetes.ProviderArgs{
			Kubeconfig:        config.RequireSecret(ctx, "kubeconfig"),
			ClusterIdentifier: pulumi.String("existing/kubeconfig"),
		})
		if err != nil {
			return err
		}
		// The namespace GpuService places its objects in (its `namespace`, default gke-gpu).
		namespace, err := corev1.NewNamespace(ctx, "namespace", &corev1.NamespaceArgs{
			Metadata: &metav1.ObjectMetaArgs{Name: pulumi.String("gke-gpu")},
		}, pulumi.Provider(cluster))
		if err != nil {
			return err
		}
		mode, kind := gkegpu.ServiceClusterModeExisting, gkegpu.WorkloadKindJob
		_, err = gkegpu.NewGpuService(ctx, "vector-add", &gkegpu.GpuServiceArgs{
			Kubernetes: cluster,
			Cluster:    gkegpu.ServiceClusterArgs{Mode: &mode},
			Workload: gkegpu.WorkloadArgs{
				Name: pulumi.String("vector-add"),
				Kind: &kind,
				// NVIDIA's CUDA sample: adds two vectors on the GPU and prints "Test PASSED".
				Image:        pulumi.String("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0"),
				Gpu:          &gkegpu.WorkloadGpuArgs{Count: pulumi.Int(1)},
				Resources:    &gkegpu.WorkloadResourcesArgs{Cpu: pulumi.String("500m"), Memory: pulumi.String("1Gi")},
				BackoffLimit: pulumi.Int(0),
			},
			Namespace: namespace.Metadata.Name().Elem(),
			Waits: &gkegpu.GpuServiceWaitsArgs{
				Namespace: pulumi.StringArray{namespace.Metadata.Name().Elem()},
			},
		})
		return err
	})
}
