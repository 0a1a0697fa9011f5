// gke-gpu from TypeScript (issue 33): an Autopilot cluster, one vLLM service on it and its API
// key, through the gke-gpu component package (`pulumi package add`, docs/package.md).
// tests/test_package_consumers.py checks every class, input and output used here against the
// schema the package serves: ApiKey is served today; GkeCluster and GpuService await typed Args
// (issue 32), and their inputs below follow the stack file's keys until then.
import * as gkegpu from "@pulumi/gke-gpu";

const cluster = new gkegpu.GkeCluster("cluster", {
    project: "acme-ml-dev",
    region: "us-central1",
    cluster: {
        mode: "autopilot",
        name: "gpu-typescript",
        location: "us-central1",
        releaseChannel: "REGULAR",
        deletionProtection: false,
        masterAuthorizedNetworks: [],
        privateNodes: false,
        systemMachineType: "e2-standard-2",
        systemNodes: 1,
    },
});

const llm = new gkegpu.GpuService("llm", {
    provider: cluster.provider,
    workload: {
        name: "llm",
        kind: "Deployment",
        image: "vllm/vllm-openai:v0.29.0@sha256:c2914767605584b6d8f45686b82de173ecc99e781897aa3d0a66dacd72c51ae1",
        gpu: { type: "nvidia-l4", count: 1 },
        spot: true,
        args: ["Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len", "4096"],
        port: 8000,
        expose: { port: 443, type: "LoadBalancer" },
    },
});

const key = new gkegpu.ApiKey("llm-key", { workload: "llm" });

export const clusterName = cluster.name;
export const url = llm.url;
export const apiKey = key.value;
