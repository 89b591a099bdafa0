import os

from hypothesis import HealthCheck, settings

# CI runs the property tests with at least 500 examples each, derandomized so a failure reproduces.
settings.register_profile(
    "ci", max_examples=500, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
