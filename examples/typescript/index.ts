// gke-gpu from TypeScript (issue 33): a Standard GKE cluster, an L4 Spot node pool, and one vLLM
// service on it behind its API gate, through the gke-gpu component package (`pulumi package add`,
// docs/package.md). tests/test_package_consumers.py checks every gke-gpu class, input and output
// used here against the schema the package serves; tests/real/test_package_sdks.py type-checks
// it with tsc against the SDK Pulumi's generator writes.
//
// Outputs of other resources flow in where a value is computed (issue 41): the project from the
// API this program enables, the cluster's name and kubeconfig, the pool as GpuService reads it.
import * as gcp from "@pulumi/gcp";
import * as k8s from "@pulumi/kubernetes";
import * as tls from "@pulumi/tls";
import * as gkegpu from "@gke-gpu/gke-gpu";

// GKE's API, enabled before anything uses it: its `project` output carries that order.
const containerApi = new gcp.projects.Service("container", {
    project: "acme-ml-dev",
    service: "container.googleapis.com",
    disableOnDestroy: false,
});

const cluster = new gkegpu.GkeCluster("cluster", {
    project: containerApi.project,
    region: "us-central1",
    cluster: {
        name: "gpu-typescript",
        mode: "standard",
        releaseChannel: "REGULAR",
        deletionProtection: false,
        systemMachineType: "e2-standard-2",
        systemNodes: 1,
    },
});

const l4 = new gkegpu.GpuNodePool("l4", {
    project: containerApi.project,
    location: "us-central1",
    clusterName: cluster.name,
    serviceAccount: cluster.nodeServiceAccount,
    // GKE's latest driver: vLLM v0.29.0 is a CUDA 13.0 build, which needs R580
    // (components/facts/pins.py); GpuService picks the same for it.
    pool: { name: "l4", gpuType: "nvidia-l4", gpuCount: 1, spot: true, maxNodes: 2, driver: "latest" },
    // GKE taints GPU nodes when a non-GPU pool exists first (GKE's GPU guide, as quoted in
    // components/platform/nodepool.py), so the pool waits for the system pool.
    after: cluster.systemPools,
});

// The Kubernetes provider this program's own objects are deployed with, from the cluster's
// kubeconfig (the components return no provider: a resource option takes a provider object, not
// an Output<Provider>). Reading cluster.kubeconfig waits for the whole cluster, its system pool
// included; the cluster's name identifies it, so only another cluster replaces it and what is
// deployed through it.
const provider = new k8s.Provider("gke", {
    kubeconfig: cluster.kubeconfig,
    clusterIdentifier: cluster.name,
});

// The namespace GpuService places its objects in (its `namespace`, default gke-gpu).
const namespace = new k8s.core.v1.Namespace(
    "namespace",
    { metadata: { name: "gke-gpu" } },
    { provider },
);

// The CA that signs the service's certificate (a LoadBalancer is served over TLS), as the
// program's own CertificateAuthority makes it (components/platform/certificate.py).
const caKey = new tls.PrivateKey("ca-key", { algorithm: "ECDSA", ecdsaCurve: "P256" });
const ca = new tls.SelfSignedCert("ca", {
    privateKeyPem: caKey.privateKeyPem,
    isCaCertificate: true,
    subject: { commonName: "gke-gpu typescript CA", organization: "gke-gpu" },
    validityPeriodHours: 3 * 365 * 24,
    earlyRenewalHours: 90 * 24,
    allowedUses: ["cert_signing", "crl_signing", "digital_signature"],
    setSubjectKeyId: true,
});

const llm = new gkegpu.GpuService("llm", {
    // The service makes its own Kubernetes provider on the cluster's kubeconfig (a secret).
    kubeconfig: cluster.kubeconfig,
    project: containerApi.project,
    region: "us-central1",
    cluster: {
        mode: "standard",
        name: cluster.name,
        location: "us-central1",
        deletionProtection: false,
    },
    // The pools the workload may land on, as the pools themselves describe them: its pods select
    // the GKE name of exactly the pool registered above.
    nodePools: [l4.servicePool],
    workload: {
        name: "llm",
        kind: "Deployment",
        image: "vllm/vllm-openai:v0.29.0@sha256:c2914767605584b6d8f45686b82de173ecc99e781897aa3d0a66dacd72c51ae1",
        gpu: { type: "nvidia-l4", count: 1 },
        spot: true,
        args: ["Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len", "4096"],
        port: 8000,
        expose: { port: 443, type: "LoadBalancer", sourceRanges: ["203.0.113.0/24"] },
    },
    ca: { certPem: ca.certPem, privateKeyPem: caKey.privateKeyPem },
    waits: {
        namespace: [namespace.metadata.name],
        gpuCapacity: [l4.name],
    },
});

export const clusterName = cluster.name;
export const url = llm.url;
export const apiKey = llm.apiKey;
// What clients trust (curl --cacert).
export const caCert = ca.certPem;
