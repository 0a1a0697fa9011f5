"""ApiKey: a generated key that protects a served model endpoint (vLLM's --api-key)."""

from typing import NotRequired, TypedDict

import pulumi
import pulumi_random as random

# 48 letters and digits: about 285 bits of entropy, and nothing a shell or an HTTP header would
# need quoted (`Authorization: Bearer <key>`).
KEY_LENGTH = 48


class ApiKeyArgs(TypedDict):
    """What the key protects. A TypedDict, because the component provider hands a component its
    inputs as a dict (pulumi 3.272.0 provider/experimental/component.py, ComponentProvider.
    construct: `constructor(name, mapped_args, options)`, mapped_args keyed by Python names)."""

    workload: str
    """The workload the key protects (its name keys the generated value)."""
    consumer: NotRequired[str]
    """expose.keys: the consumer this key is for (it keys the value too); absent: the workload's."""


class ApiKey(pulumi.ComponentResource):
    """A random API key, generated once and kept in the stack's state as a secret.

    RandomPassword marks its `result` secret (pulumi_random 4.21.4 random_password.py:
    additional_secret_outputs=["bcryptHash", "result"]); the value is wrapped as a secret here as
    well, so it stays one on every path into the workload's Secret and the `apiKey` output.
    It changes only when the resource is replaced (a new workload name): updates keep it.
    """

    value: pulumi.Output[str]
    """The key (secret)."""

    def __init__(
        self, name: str, args: ApiKeyArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:ApiKey", name, None, opts)
        consumer = args.get("consumer")
        password = random.RandomPassword(
            f"{name}-password",
            length=KEY_LENGTH,
            special=False,
            keepers={
                "workload": args["workload"],
                **({"consumer": consumer} if consumer else {}),
            },
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.value = pulumi.Output.secret(password.result)
        self.register_outputs({"value": self.value})
