import pytest

from dpcourse import audit
from dpcourse.svt_variants import VARIANTS


@pytest.mark.parametrize("key", ["alg3", "alg4", "alg5", "alg6"])
def test_every_flawed_variant_is_flagged(key):
    d, d_prime, threshold, trials = audit.AUDIT_COUNTEREXAMPLES[key]
    assert trials <= 10**6
    result = audit.audit(key, d, d_prime, epsilon=1.0, c=1, threshold=threshold, trials=trials, rng=1)
    assert result.p_value < 0.01 and result.flagged
    assert result.epsilon_lower_bound > 1.0
    assert result.ci_d[0] <= result.p_d <= result.ci_d[1]


@pytest.mark.slow
@pytest.mark.parametrize("key", ["alg1", "alg2", "svt_s"])
def test_correct_variants_are_not_flagged_beyond_the_level(key):
    # 20 seeds at the 1% level: a false flag has probability ≤ 0.01 each, so even one flag among
    # 20 happens with probability ≤ 0.18; two or more (probability ≤ 0.017) fails the test.
    d, d_prime = audit.adversarial_pair(8)
    flags = sum(audit.audit(key, d, d_prime, epsilon=1.0, c=1, threshold=0.5, trials=20_000, rng=seed).flagged
                for seed in range(20))
    assert flags <= 1


def test_search_mode_reports_the_pattern_and_a_bonferroni_p_value():
    result = audit.audit("alg5", epsilon=1.0, c=1, trials=20_000, rng=0)
    assert result.pattern in audit.AUDIT_PATTERNS or result.pattern.split(" (")[0] in audit.AUDIT_PATTERNS
    assert result.p_value < 0.01
    private = audit.audit("alg1", epsilon=1.0, c=1, trials=20_000, rng=0)
    assert private.p_value <= 1.0 and not private.flagged


def test_variant_objects_are_accepted():
    d, d_prime = audit.adversarial_pair(4)
    result = audit.audit(VARIANTS["alg1"], d, d_prime, epsilon=1.0, threshold=0.5, trials=2000, rng=0)
    assert result.variant == "alg1" and result.trials == 2000


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: audit.audit("alg1", [0.0, 0.0], None, epsilon=1.0), "give both"),
        (lambda: audit.audit("alg1", [0.0], [3.0], epsilon=1.0), "differ by at most"),
        (lambda: audit.audit("alg1", [0.0], [1.0], epsilon=1.0, trials=2 * 10**6), "trials must be an integer"),
        (lambda: audit.audit("alg1", [0.0], [1.0], epsilon=-1.0, trials=1000), "epsilon"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError, match=message):
        call()
