"""gke-gpu's CrossGuard policy pack; its rules (policy.rules) import without pulumi_policy."""
