"""One test per mistake class issue 8 found, each asserting what a user must see instead.

Stack files are written as YAML text and go through `tools.render` as a user would run it; the
engine-level tests hand the program config the way `pulumi up` does: a secure value anywhere in a
structured key makes the whole top-level key secret, and the program receives it decrypted as JSON
(pulumi/pulumi sdk/go/common/resource/config: `Object.Secure()`).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from components.config import ConfigError
from dev import fuzz
from tests.conftest import CLUSTER, DEPLOYMENT, PROVIDER
from tools import render
from tools.engine import Recording, run_program

K8S_SECRET = "kubernetes:core/v1:Secret"
# Realistic ciphertexts (passphrase provider and service backend formats) and a plaintext token.
CIPHERTEXT = "v1:Zm9vYmFyYmF6cXV4:c2VjcmV0LWNpcGhlcnRleHQtZm9yLXJlZ3Jlc3Npb24tdGVzdHM="
CIPHERTEXT_2 = "AAABAJ2hxU1dGK7kYx0p9dF8lq3LqKcWgq0s9T0Jk3rZk1Y6fZ0wA=="
HF_TOKEN = "hf_RegressionTokenThatMustNeverBeShown42"
KUBE_TOKEN = "kube_BearerTokenThatMustNeverBeShown77"
KUBE_KEY = "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2Z0lCQURBTkJna3Foa2lHOXcwQkFRRUZBQVND"
KUBECONFIG = f"""apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster:
    server: https://192.0.2.10:6443
contexts:
- name: lab
  context:
    cluster: lab
    user: admin
current-context: lab
users:
- name: admin
  user:
    token: {KUBE_TOKEN}
    client-key-data: {KUBE_KEY}
"""

HEAD = """config:
  gcp:project: acme-ml-dev
  gcp:region: us-central1
"""
AUTOPILOT = (
    HEAD
    + """  gke-gpu:cluster:
    mode: autopilot
    name: gpu-dev
    deletionProtection: false
  gke-gpu:workloads:
    - name: chat
      image: vllm/vllm-openai:v0.6.4
      gpu: {type: nvidia-l4, count: 1}
      spot: true
      port: 8000
      probe: {path: /health}
      cache: {size: 30Gi}
      expose: {port: 443}
"""
)
STANDARD = (
    HEAD
    + """  gke-gpu:cluster:
    mode: standard
    name: gpu-std
    deletionProtection: false
  gke-gpu:nodePools:
    - name: l4
      gpu: {type: nvidia-l4, count: 1}
      spot: true
      maxNodes: 2
  gke-gpu:workloads:
    - name: chat
      image: vllm/vllm-openai:v0.6.4
      gpu: {type: nvidia-l4, count: 1}
      spot: true
      port: 8000
      probe: {path: /health}
      expose: {port: 443}
"""
)
WORKLOAD: dict[str, Any] = {
    "name": "chat",
    "image": "vllm/vllm-openai:v0.6.4",
    "gpu": {"type": "nvidia-l4", "count": 1},
    "spot": True,
    "port": 8000,
    "probe": {"path": "/health"},
    "cache": {"size": "30Gi"},
    "expose": {"port": 443},
}
GCP = {"gcp:project": "acme-ml-dev", "gcp:region": "us-central1"}


class Rendered:
    """What `python -m tools.render` did with a stack file: exit code, output, files."""

    def __init__(self, code: int, out: str, err: str, out_dir: Path) -> None:
        self.code, self.out, self.err, self.out_dir = code, out, err, out_dir
        self.problems = [line[4:] for line in err.splitlines() if line.startswith("  - ")]

    def everything(self) -> str:
        written = [p.read_text() for p in self.out_dir.rglob("*") if p.is_file()]
        return self.out + self.err + "".join(written)

    def resources(self) -> list[dict[str, Any]]:
        plan = self.out_dir / "plan.json"
        return json.loads(plan.read_text())["resources"] if plan.exists() else []

    def names(self, path: str) -> bool:
        """A problem starts with `path` or a key path below it."""
        return fuzz.reported(self.problems, (path,))


def render_text(
    tmp_path: Path, text: str, stack: str = "reg", *extra: str, file_stack: str | None = None
) -> Rendered:
    stack_file = tmp_path / f"Pulumi.{file_stack or stack}.yaml"
    stack_file.write_text(text)
    out_dir = tmp_path / "out"
    out, err = io.StringIO(), io.StringIO()
    argv = [stack, "--stack-file", str(stack_file), "--out", str(out_dir), *extra]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = render.main(argv)
        except SystemExit as exc:  # argparse refusing an argument is exit 2 too
            code = exc.code if isinstance(exc.code, int) else -1
    return Rendered(code, out.getvalue(), err.getvalue(), out_dir)


def unreadable_case() -> fuzz.Case:
    """A case whose file YAML cannot read: its problems may start with the file's name."""
    mistake = fuzz.Mutation("crash", "yaml-syntax-error", True, unreadable=True)
    return fuzz.Case(0, "regression", "reg", "crash", {}, [mistake])


def assert_config_error(result: Rendered, *paths: str) -> None:
    assert result.code == render.EXIT_CONFIG, (
        f"expected a config error (exit 2), got exit {result.code}: the mistake was accepted "
        f"and would reach `pulumi up`. stderr: {result.err[-600:]}"
    )
    assert "Traceback" not in result.err, "a config error is a list of problems, not a traceback"
    for path in paths:
        assert result.names(path), (
            f"no problem names {path!r}: the user cannot tell which setting to fix. "
            f"Problems: {result.problems}"
        )


def assert_not_shown(text: str, *secrets: str) -> None:
    for secret in secrets:
        for needle in fuzz.needles(secret):
            assert needle not in text, (
                f"{needle[:8]}... is shown: secrets and ciphertext must never reach a terminal, "
                "a CI log or a plan file"
            )


def recorded_text(recording: Recording) -> str:
    public = {k: v for k, v in recording.stack_outputs.items() if k not in recording.secret_outputs}
    resources = [(r.inputs, r.outputs) for r in recording.resources]
    return json.dumps([resources, public, recording.invokes], default=str)


def workload_env(recording: Recording, name: str) -> dict[str, dict[str, Any]]:
    objects = [r for r in recording.of_type(DEPLOYMENT) if r.inputs["metadata"]["name"] == name]
    assert objects, (
        f"the user's workload {name!r} is not in the plan "
        f"({[r.inputs['metadata']['name'] for r in recording.of_type(DEPLOYMENT)]}): `pulumi up` "
        "would delete it and deploy something else"
    )
    container = objects[0].inputs["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e for e in container.get("env", [])}


# --- nested secrets drop whole blocks ----------------------------------------------------------


def test_a_nested_secret_env_value_keeps_the_users_workload_and_arrives_through_a_secret() -> None:
    workload = {**WORKLOAD, "env": {"HF_TOKEN": HF_TOKEN, "LOG_LEVEL": "info"}}
    recording = run_program(
        {**GCP, "gke-gpu:workloads": [workload]}, secret_keys=("gke-gpu:workloads",)
    )
    env = workload_env(recording, "chat")
    ref = env.get("HF_TOKEN", {}).get("valueFrom", {}).get("secretKeyRef")
    assert ref, "a value set with --secret must reach the pod through a Secret, not a plain value"
    secrets = [r.inputs for r in recording.of_type(K8S_SECRET)]
    assert any(
        s["metadata"]["name"] == ref["name"]
        and (s.get("stringData") or s.get("data") or {}).get(ref["key"]) == "[secret]"
        for s in secrets
    ), "the Secret the pod reads must hold HF_TOKEN, and the engine must see it as secret"
    # The engine marks the whole key secret, so LOG_LEVEL may come from the Secret too.
    assert "LOG_LEVEL" in env, "the other values of a secret key are kept"
    assert_not_shown(recorded_text(recording), HF_TOKEN)


def test_a_stack_file_with_a_nested_secure_env_value_renders_the_users_workload(
    tmp_path: Path,
) -> None:
    text = AUTOPILOT + f"      env:\n        HF_TOKEN:\n          secure: {CIPHERTEXT}\n"
    result = render_text(tmp_path, text)
    assert result.code in (render.EXIT_OK, render.EXIT_FAILED), (
        f"`pulumi config set --path --secret` is Pulumi's own way to set a nested secret; the "
        f"offline plan must read it as the CLI does (exit {result.code}: {result.problems})"
    )
    deployments = [r for r in result.resources() if r["type"] == DEPLOYMENT]
    names = sorted(d["inputs"]["metadata"]["name"] for d in deployments)
    assert names == ["chat", "chat-gate"], (
        f"the user's workload (and its gate) must be kept, got {names}"
    )
    assert_not_shown(result.everything(), CIPHERTEXT)


def test_a_secret_cluster_key_is_read_not_replaced_by_defaults() -> None:
    cluster = {
        "mode": "standard",
        "name": "gpu-std",
        "deletionProtection": False,
        "masterAuthorizedNetworks": ["203.0.113.0/24"],
    }
    pools = [{"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "spot": True}]
    config = {
        **GCP,
        "gke-gpu:cluster": cluster,
        "gke-gpu:nodePools": pools,
        "gke-gpu:workloads": [WORKLOAD],
    }
    try:
        recording = run_program(config, secret_keys=("gke-gpu:cluster",))
    except ConfigError as exc:
        # Refusing it is fine too, as long as the error names the key.
        assert any(fuzz.reported([p], ("cluster",)) for p in exc.problems), exc.problems
        return
    (gke,) = recording.of_type(CLUSTER)
    assert gke.inputs["name"] == "gpu-std", (
        "a secret cluster key must not be skipped: the cluster would be renamed (replaced)"
    )
    networks = json.dumps(gke.inputs.get("masterAuthorizedNetworksConfig"))
    assert "203.0.113.0/24" in networks or "[secret]" in networks, (
        "the control plane's authorized networks must not vanish because the key is secret"
    )


def test_a_nested_kubeconfig_secret_feeds_the_provider_as_a_secret() -> None:
    config = {
        "gke-gpu:cluster": {"mode": "existing", "kubeconfig": KUBECONFIG},
        "gke-gpu:workloads": [
            {
                "name": "vector-add",
                "kind": "Job",
                "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
                "gpu": {"count": 1},
                "port": None,
                "nodeSelector": {"gpu": "true"},
            }
        ],
    }
    recording = run_program(config, secret_keys=("gke-gpu:cluster",))
    (provider,) = recording.of_type(PROVIDER)
    assert provider.inputs.get("kubeconfig") == "[secret]", (
        "`pulumi config set --path --secret gke-gpu:cluster.kubeconfig` must reach the provider, "
        "as a secret"
    )
    assert_not_shown(recorded_text(recording), KUBE_TOKEN, KUBE_KEY)


# --- crashes -----------------------------------------------------------------------------------


def test_an_unquoted_date_in_env_is_a_string_not_a_crash(tmp_path: Path) -> None:
    result = render_text(tmp_path, AUTOPILOT + "      env:\n        BUILD_DATE: 2024-01-01\n")
    assert result.code in (render.EXIT_OK, render.EXIT_FAILED), (
        f"the CLI reads stack files as YAML 1.2, where 2024-01-01 is a string (exit "
        f"{result.code}: {result.problems or result.err[-300:]})"
    )
    (deployment,) = [
        r for r in result.resources() if r["type"] == DEPLOYMENT and "ApiGate" not in r["parent"]
    ]
    env = deployment["inputs"]["spec"]["template"]["spec"]["containers"][0]["env"]
    value = next(e["value"] for e in env if e["name"] == "BUILD_DATE")
    assert isinstance(value, str) and value.startswith("2024-01-01"), value


def test_node_pools_set_to_true_is_a_config_error(tmp_path: Path) -> None:
    text = HEAD + "  gke-gpu:cluster: {mode: standard}\n  gke-gpu:nodePools: true\n"
    result = render_text(tmp_path, text)
    assert_config_error(result, "gke-gpu:nodePools")


def test_a_document_that_is_not_a_mapping_is_a_config_error(tmp_path: Path) -> None:
    result = render_text(tmp_path, "- gcp:project: acme-ml-dev\n- gcp:region: us-central1\n")
    assert_config_error(result)
    case = unreadable_case()
    assert result.problems and all(fuzz.has_key_path(p, case) for p in result.problems), (
        f"each problem must start with where it is (`config: ` or the file's name): "
        f"{result.problems}"
    )


@pytest.mark.parametrize(
    "broken",
    [
        "  gke-gpu:cluster: {mode: standard\n",  # unclosed flow mapping
        '  gcp:zone: "us-central1-a\n',  # unclosed quote
        "\tgke-gpu:namespace: team-a\n",  # a tab where YAML allows only spaces
    ],
)
def test_a_yaml_syntax_error_is_a_config_error_without_a_traceback(
    tmp_path: Path, broken: str
) -> None:
    result = render_text(tmp_path, HEAD + broken)
    assert_config_error(result)
    case = unreadable_case()
    assert result.problems and all(fuzz.has_key_path(p, case) for p in result.problems), (
        f"each problem must start with where it is: the file, line and column "
        f"(`Pulumi.reg.yaml: line 4, column 3: ...`) when YAML cannot read it: {result.problems}"
    )


def test_a_non_string_key_is_a_config_error_naming_its_mapping(tmp_path: Path) -> None:
    result = render_text(tmp_path, AUTOPILOT + "      env:\n        1: one\n")
    assert_config_error(result, "workloads[0].env")


# --- bad input accepted ------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["true", "1.0", "1.5"])
def test_a_boolean_or_float_is_not_taken_for_an_integer(tmp_path: Path, value: str) -> None:
    result = render_text(tmp_path, AUTOPILOT + f"      replicas: {value}\n")
    assert_config_error(result, "workloads[0].replicas")


def test_expose_port_on_is_a_string_not_port_1(tmp_path: Path) -> None:
    text = AUTOPILOT.replace("expose: {port: 443}", "expose: {port: on}")
    result = render_text(tmp_path, text)
    assert_config_error(result, "workloads[0].expose.port")


def test_a_duplicate_key_is_refused_as_the_cli_refuses_it(tmp_path: Path) -> None:
    text = AUTOPILOT.replace("    name: gpu-dev\n", "    name: gpu-dev\n    name: gpu-two\n")
    result = render_text(tmp_path, text)
    assert_config_error(result)
    case = unreadable_case()
    assert result.problems and all(fuzz.has_key_path(p, case) for p in result.problems), (
        f"the problem must say where the duplicate is: {result.problems}"
    )
    assert any("name" in p for p in result.problems), "the duplicated key must be named"


def test_a_duplicate_key_holding_a_secret_does_not_echo_it(tmp_path: Path) -> None:
    text = AUTOPILOT + f"  gke-gpu:hfToken: {{secure: {CIPHERTEXT}}}\n" * 2
    result = render_text(tmp_path, text)
    assert_config_error(result)
    assert_not_shown(result.everything(), CIPHERTEXT)


def test_a_reserved_namespace_is_refused(tmp_path: Path) -> None:
    result = render_text(tmp_path, AUTOPILOT + "  gke-gpu:namespace: kube-system\n")
    assert_config_error(result, "gke-gpu:namespace")


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("    - name: chat\n", '    - name: "chat\\n"\n', "workloads[0].name"),
        ("  gcp:region: us-central1\n", '  gcp:region: "us-central1\\n"\n', "gcp:region"),
    ],
)
def test_a_name_with_a_trailing_newline_is_refused(
    tmp_path: Path, old: str, new: str, path: str
) -> None:
    result = render_text(tmp_path, AUTOPILOT.replace(old, new))
    assert_config_error(result, path)


def test_an_invalid_project_id_is_refused(tmp_path: Path) -> None:
    result = render_text(tmp_path, AUTOPILOT.replace("acme-ml-dev", "Acme_ML"))
    assert_config_error(result, "gcp:project")


def test_an_image_reference_with_a_space_is_refused(tmp_path: Path) -> None:
    text = AUTOPILOT.replace("image: vllm/vllm-openai:v0.6.4", 'image: "vllm/vllm-openai: v0.6.4"')
    result = render_text(tmp_path, text)
    assert_config_error(result, "workloads[0].image")


@pytest.mark.parametrize(
    ("key", "value"), [("cpu", '"0"'), ("memory", '"0Gi"'), ("memory", '"٣Gi"'), ("cpu", '"٤"')]
)
def test_a_zero_or_non_ascii_digit_quantity_is_refused(
    tmp_path: Path, key: str, value: str
) -> None:
    result = render_text(tmp_path, AUTOPILOT + f"      resources: {{{key}: {value}}}\n")
    assert_config_error(result, f"workloads[0].resources.{key}")


def test_an_unbounded_integer_is_refused(tmp_path: Path) -> None:
    result = render_text(tmp_path, AUTOPILOT + f"      replicas: {10**30}\n")
    assert_config_error(result, "workloads[0].replicas")


def test_a_node_selector_cannot_override_the_gpu_selector(tmp_path: Path) -> None:
    text = AUTOPILOT + '      nodeSelector: {"cloud.google.com/gke-accelerator": nvidia-tesla-t4}\n'
    result = render_text(tmp_path, text)
    assert_config_error(result, "workloads[0].nodeSelector")


def test_a_node_selector_cannot_override_the_node_pool_selector(tmp_path: Path) -> None:
    text = STANDARD + '      nodeSelector: {"cloud.google.com/gke-nodepool": other}\n'
    result = render_text(tmp_path, text)
    assert_config_error(result, "workloads[0].nodeSelector")


def test_two_workloads_whose_services_collide_are_refused(tmp_path: Path) -> None:
    twin = AUTOPILOT.split("  gke-gpu:workloads:\n")[1].replace("v0.6.4", "v0.6.3")
    result = render_text(tmp_path, AUTOPILOT + twin)
    assert_config_error(result)
    assert result.names("workloads[1]") or result.names("workloads[0]"), result.problems


def test_a_stack_named_prod_eu_without_cluster_name_gets_a_valid_gke_name(tmp_path: Path) -> None:
    text = AUTOPILOT.replace("    name: gpu-dev\n", "")
    result = render_text(tmp_path, text, "Prod_EU")
    assert result.code in (render.EXIT_OK, render.EXIT_FAILED), (
        f"any Pulumi stack name must give a usable default cluster name: {result.problems}"
    )
    names = [r["inputs"]["name"] for r in result.resources() if r["type"] == CLUSTER]
    assert names and all(fuzz.GKE_NAME.fullmatch(n) for n in names), (
        f"{names}: GKE names are lowercase letters, digits and hyphens; GKE would refuse this one "
        "at `pulumi up`"
    )


def test_an_unknown_key_in_the_gke_gpu_namespace_is_refused(tmp_path: Path) -> None:
    result = render_text(tmp_path, AUTOPILOT + "  gke-gpu:workload: {name: x}\n")
    assert_config_error(result, "gke-gpu:workload")


def test_a_look_alike_namespace_is_refused(tmp_path: Path) -> None:
    text = AUTOPILOT.replace("  gke-gpu:cluster:\n", "  gke_gpu:cluster:\n")
    result = render_text(tmp_path, text)
    assert_config_error(result, "gke_gpu:cluster")


def test_an_unnamespaced_key_is_refused(tmp_path: Path) -> None:
    text = AUTOPILOT.replace("  gke-gpu:cluster:\n", "  cluster:\n")
    result = render_text(tmp_path, text)
    assert_config_error(result)
    assert result.names("cluster") or result.names("config.cluster"), (
        f"the key without a namespace must be named: {result.problems}"
    )


def test_an_unsupported_kubernetes_version_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    result = render_text(tmp_path, AUTOPILOT, "reg", "--kubernetes-version", "9.99")
    assert result.code in (render.EXIT_FAILED, render.EXIT_CONFIG), result.code
    assert "Traceback" not in result.err and "9.99" in result.err, (
        f"the user must read which version is unsupported, not a traceback: {result.err[-400:]}"
    )


# --- secrets echoed ----------------------------------------------------------------------------


def test_a_secure_value_where_no_secret_belongs_is_named_by_path_only(tmp_path: Path) -> None:
    text = AUTOPILOT.replace(
        "gpu: {type: nvidia-l4, count: 1}",
        f"gpu: {{type: nvidia-l4, count: {{secure: {CIPHERTEXT}}}}}",
    )
    result = render_text(tmp_path, text)
    assert_config_error(result, "workloads[0].gpu.count")
    assert_not_shown(result.everything(), CIPHERTEXT)


def test_an_invalid_secret_value_is_reported_without_its_value() -> None:
    workload = {**WORKLOAD, "gpu": {"type": "nvidia-l4", "count": HF_TOKEN}}
    with pytest.raises(ConfigError) as info:
        run_program({**GCP, "gke-gpu:workloads": [workload]}, secret_keys=("gke-gpu:workloads",))
    problems = info.value.problems
    assert fuzz.reported(problems, ("workloads[0].gpu.count",)), problems
    assert_not_shown(str(info.value) + "\n".join(problems), HF_TOKEN)


def test_a_kubeconfig_pasted_under_the_wrong_key_is_not_echoed(tmp_path: Path) -> None:
    pasted = "".join(f"    {line}\n" for line in KUBECONFIG.splitlines())
    text = AUTOPILOT + "  gke-gpu:kubeConfig: |\n" + pasted
    result = render_text(tmp_path, text)
    assert_config_error(result, "gke-gpu:kubeConfig")
    assert_not_shown(result.everything(), KUBE_TOKEN, KUBE_KEY)


def test_a_ciphertext_under_a_misspelled_key_is_not_echoed(tmp_path: Path) -> None:
    text = AUTOPILOT + f"      evn:\n        HF_TOKEN: {{secure: {CIPHERTEXT_2}}}\n"
    result = render_text(tmp_path, text)
    assert_config_error(result, "workloads[0].evn")
    assert_not_shown(result.everything(), CIPHERTEXT_2)


# --- one problem hides another -----------------------------------------------------------------


def test_a_pool_without_a_name_still_reports_its_count_zone_and_driver(tmp_path: Path) -> None:
    text = STANDARD.replace(
        "    - name: l4\n      gpu: {type: nvidia-l4, count: 1}\n",
        "    - gpu: {type: nvidia-l4, count: 3}\n      zones: [europe-west4-a]\n"
        "      driver: newest\n",
    )
    result = render_text(tmp_path, text)
    # nvidia-l4 pools take 1, 2, 4 or 8 GPUs per node (components/facts/catalog/machines.py, G2
    # machine types).
    assert_config_error(
        result, "nodePools[0].gpu.count", "nodePools[0].zones", "nodePools[0].driver"
    )


def test_negative_replicas_do_not_hide_an_unset_secret(tmp_path: Path) -> None:
    text = AUTOPILOT + "      replicas: -1\n      secretEnv: {HF_TOKEN: hfTokenNeverSet}\n"
    result = render_text(tmp_path, text)
    assert_config_error(result, "workloads[0].replicas", "workloads[0].secretEnv")


def test_a_user_chosen_key_is_reported_as_written(tmp_path: Path) -> None:
    result = render_text(tmp_path, AUTOPILOT + "      env:\n        HF_TOKEN: [a, b]\n")
    assert_config_error(result, "workloads[0].env.HF_TOKEN")
