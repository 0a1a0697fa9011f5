"""What a Gateway on a name (expose.domain) cannot do, refused before anything is registered
(issue 43): a cloud.goog name the stack cannot obtain, source ranges that admit nobody on an IPv4
address, and one name for two workloads. Each stack file goes through `tools.render` as a user
runs it; each refusal names its key path and says the fix, and every one is reported at once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from components.config import from_stack_file
from components.config.source import read_stack_file
from tests.test_config_regressions import Rendered, assert_config_error, render_text

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "acme-ml-dev"

DEV = f"""config:
  gcp:project: {PROJECT}
  gcp:region: us-central1
  gke-gpu:cluster:
    mode: autopilot
    name: gpu-dev
    deletionProtection: false
  gke-gpu:workloads:
    - name: llm
      image: vllm/vllm-openai:v0.29.0
      args: [Qwen/Qwen2.5-0.5B-Instruct]
      gpu: {{type: nvidia-l4, count: 1}}
      cache: {{size: 30Gi}}
      expose:
        port: 443
        domain: DOMAIN
"""
# A second model beside llm, in the same stack.
CHAT = """    - name: chat
      image: vllm/vllm-openai:v0.29.0
      args: [Qwen/Qwen2.5-1.5B-Instruct]
      gpu: {type: nvidia-l4, count: 1}
      cache: {size: 30Gi}
      expose:
        port: 443
        domain: OTHER
"""


def dev_stack(domain: str) -> str:
    return DEV.replace("DOMAIN", domain)


def two_models(llm: str, chat: str) -> str:
    return dev_stack(llm) + CHAT.replace("OTHER", chat)


def problem_at(result: Rendered, path: str) -> str:
    """The one problem at exactly `path`."""
    (found,) = [p for p in result.problems if p.startswith(f"{path}: ")]
    return found


# --- 1. a cloud.goog name this stack cannot obtain --------------------------------------------


@pytest.mark.parametrize(
    ("domain", "why"),
    [
        ("llm.endpoints.someone-elses-project.cloud.goog", "names another project"),
        ("llm.acme.cloud.goog", "is not such a name"),
        (f"v1.llm.endpoints.{PROJECT}.cloud.goog", "is not such a name"),
    ],
)
def test_a_cloud_goog_name_that_is_not_this_projects_is_refused_with_auto_as_the_fix(
    tmp_path: Path, domain: str, why: str
) -> None:
    result = render_text(tmp_path, dev_stack(domain))
    assert_config_error(result, "workloads[0].expose.domain")
    problem = problem_at(result, "workloads[0].expose.domain")
    assert why in problem and "<name>.endpoints.<gcp:project>.cloud.goog" in problem, problem
    assert "Use domain: auto" in problem and "a name in a domain you own" in problem, (
        f"the refusal says the fix: {problem}"
    )


def test_this_projects_endpoints_name_written_out_is_refused_as_its_certificate_cannot_issue(
    tmp_path: Path,
) -> None:
    """Written out, the name is certified by DNS authorization: a CNAME nobody can add under
    cloud.goog. Only `auto` makes the Endpoints service and a load-balancer-authorized one."""
    result = render_text(tmp_path, dev_stack(f"llm.endpoints.{PROJECT}.cloud.goog"))
    assert_config_error(result, "workloads[0].expose.domain")
    problem = problem_at(result, "workloads[0].expose.domain")
    assert "DNS authorization" in problem and "never be issued" in problem, problem
    assert "Use domain: auto" in problem, problem


def test_a_domain_scoped_project_is_told_to_use_its_own_domain_not_auto(tmp_path: Path) -> None:
    """auto is refused for a domain-scoped project (its colon is no DNS character), so the fix
    does not offer it."""
    text = dev_stack("llm.endpoints.acme-ml.cloud.goog").replace(PROJECT, "example.com:acme-ml")
    problem = problem_at(render_text(tmp_path, text), "workloads[0].expose.domain")
    assert "Use a name in a domain you own." in problem and "auto" not in problem, problem


@pytest.mark.parametrize("domain", ["auto", "llm.acme.example", "cloud.google.example"])
def test_auto_and_a_name_of_your_own_still_load(tmp_path: Path, domain: str) -> None:
    result = render_text(tmp_path, dev_stack(domain))
    assert result.code == 0, result.problems or result.err[-600:]


# --- 2. source ranges no client of an IPv4 address is in ---------------------------------------


def prod_gateway(ranges: str) -> str:
    text = (ROOT / "examples" / "Pulumi.gateway-prod.yaml").read_text()
    listed = "sourceRanges: [203.0.113.0/24, 198.51.100.0/24]"
    assert listed in text, "the production Gateway example lists its ranges on one line"
    return text.replace(listed, f"sourceRanges: [{ranges}]")


def test_a_production_gateway_with_ipv6_only_source_ranges_is_refused_as_admitting_nobody(
    tmp_path: Path,
) -> None:
    result = render_text(tmp_path, prod_gateway("2001:db8:1::/48, 2001:db8:2::/48"), "gateway-prod")
    assert_config_error(result, "workloads[0].expose.sourceRanges")
    problem = problem_at(result, "workloads[0].expose.sourceRanges")
    assert "IPv6 ranges only" in problem and "reserved global address" in problem, problem
    assert "admits nobody" in problem and "List your clients' IPv4 ranges" in problem, problem


def test_the_production_gateway_with_ipv4_and_ipv6_ranges_still_loads(tmp_path: Path) -> None:
    result = render_text(tmp_path, prod_gateway("203.0.113.0/24, 2001:db8:1::/48"), "gateway-prod")
    assert result.code == 0, result.problems or result.err[-600:]


@pytest.mark.parametrize("type_", ["LoadBalancer", "Internal"])
def test_ipv6_only_source_ranges_on_a_load_balancer_the_stack_builds_are_refused(
    tmp_path: Path, type_: str
) -> None:
    """Not only in production: the cluster the stack builds is IPv4-only, so are its load
    balancers, and a stack whose ranges hold no IPv4 client admits nobody wherever it runs."""
    text = dev_stack("auto").replace(
        "        domain: auto\n",
        f"        type: {type_}\n        sourceRanges: ['2001:db8:1::/48']\n",
    )
    result = render_text(tmp_path, text)
    assert_config_error(result, "workloads[0].expose.sourceRanges")
    problem = problem_at(result, "workloads[0].expose.sourceRanges")
    assert "IPv6 ranges only" in problem and "load balancer's address is IPv4" in problem
    assert "List your clients' IPv4 ranges" in problem, problem


# --- 3. one name per workload ---------------------------------------------------------------


def test_two_workloads_on_one_name_are_refused_naming_both_key_paths(tmp_path: Path) -> None:
    result = render_text(tmp_path, two_models("llm.acme.example", "llm.acme.example"))
    assert_config_error(result, "workloads[1].expose.domain")
    problem = problem_at(result, "workloads[1].expose.domain")
    assert "workloads[0].expose.domain" in problem, f"the refusal names both paths: {problem}"
    assert "Give each workload its own name" in problem, problem
    assert not [p for p in result.problems if p.startswith("workloads[0].expose.domain")], (
        "the name is refused once, at the second workload"
    )


def test_a_name_that_is_another_workloads_auto_name_is_refused(tmp_path: Path) -> None:
    """`auto` derives chat's name from the stack; written out for llm it is the same name (the
    name as the built config has it, so the rule and the build cannot drift apart)."""
    alone = tmp_path / "alone"
    alone.mkdir()
    stack_file = alone / "Pulumi.reg.yaml"
    stack_file.write_text(dev_stack("auto").replace("name: llm", "name: chat"))
    (chat,) = from_stack_file(read_stack_file(stack_file), "reg").workloads
    assert chat.expose is not None and chat.expose.domain is not None
    result = render_text(tmp_path, two_models(chat.expose.domain, "auto"))
    assert_config_error(result, "workloads[0].expose.domain")
    shared = [
        p
        for p in result.problems
        if p.startswith("workloads[0].expose.domain: ") and "workloads[1].expose.domain" in p
    ]
    assert len(shared) == 1 and "(auto)" in shared[0], result.problems


# --- every problem at once ------------------------------------------------------------------


def test_every_gateway_refusal_is_reported_at_once(tmp_path: Path) -> None:
    text = two_models("llm.endpoints.other-project.cloud.goog", "chat.acme.example").replace(
        "        domain: chat.acme.example\n",
        "        domain: chat.acme.example\n        sourceRanges: ['2001:db8:1::/48']\n",
    )
    text += CHAT.replace("name: chat", "name: chat-b").replace("OTHER", "chat.acme.example")
    result = render_text(tmp_path, text)
    assert_config_error(
        result,
        "workloads[0].expose.domain",
        "workloads[1].expose.sourceRanges",
        "workloads[2].expose.domain",
    )
