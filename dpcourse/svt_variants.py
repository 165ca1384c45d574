"""The published sparse vector variants of Lyu, Su & Li (2017), and Lyu's standard SVT.

Lecture 3's table of six SVT algorithms, each as its paper states it, and SVT-S, the
standard SVT that Lyu et al. propose. All answer a list of queries against thresholds
T₁, T₂, … and differ in the noise they add and in when they stop:

====  =======================  ==============  =================  ==========  ============================
key   source                   threshold ρ     query noise νᵢ      on ⊤        stops after
====  =======================  ==============  =================  ==========  ============================
alg1  Lyu et al. 2017          Lap(Δ/ε₁)       Lap(2cΔ/ε₂)         ⊤           c ⊤
alg2  Dwork & Roth 2014        Lap(cΔ/ε₁)      Lap(2cΔ/ε₁)         ⊤, new ρ    c ⊤ (new ρ ~ Lap(cΔ/ε₂))
alg3  Roth 2011                Lap(Δ/ε₁)       Lap(cΔ/ε₂)          qᵢ + νᵢ     c ⊤
alg4  Lee & Clifton 2014       Lap(Δ/ε₁)       Lap(Δ/ε₂)           ⊤           c ⊤   (ε₁ = ε/4)
alg5  Stoddard et al. 2014     Lap(Δ/ε₁)       0                   ⊤           never
alg6  Chen et al. 2015         Lap(Δ/ε₁)       Lap(Δ/ε₂)           ⊤           never
====  =======================  ==============  =================  ==========  ============================

with ε₁ = ε/2 and ε₂ = ε − ε₁ unless stated. What Lyu et al. prove: Alg. 1 and 2 are ε-DP;
Alg. 3 is not ε′-DP for any ε′ (it releases the very noise it compared with); Alg. 4 is
((1 + 6c)/4)ε-DP (its query noise does not grow with c); Alg. 5 and 6 are not ε′-DP for any
ε′ (no query noise; no bound on the number of ⊤).

Output codes (one float array ``(trials, m)``): :data:`BOTTOM` = −∞ for ⊥, :data:`TOP` = +∞
for ⊤, :data:`HALTED` = NaN for a query not answered because the algorithm had stopped, and
a finite number for a released value (Alg. 3, and SVT-S with ε₃ > 0).

Longer than 400 lines because ruff's formatter (issue 22) spreads the six variants' registry and the
retraversal loop over more lines; the code did not grow. The top-c selection metrics at the end
(``zipf_counts`` … ``normalized_cumulative_rank``, 70 lines) are the piece to move out next.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_answers_and_threshold,
    check_array,
    check_binary,
    check_epsilon,
    check_integer,
    check_nonnegative,
    check_positive,
    check_trials,
)

__all__ = [
    "BOTTOM",
    "HALTED",
    "TOP",
    "VARIANTS",
    "NoiseSpec",
    "Variant",
    "f_measure",
    "format_outputs",
    "normalized_cumulative_rank",
    "normalized_cumulative_support",
    "run_spec",
    "svt_retraversal",
    "svt_standard",
    "svt_standard_spec",
    "top_c_mask",
    "zipf_counts",
]

BOTTOM, TOP, HALTED = -np.inf, np.inf, np.nan
_TOP_OR_BOTTOM = np.array([BOTTOM, TOP])  # indexed by "above the threshold"


@dataclass(frozen=True)
class NoiseSpec:
    """What one run of a variant does, as numbers: the scales of its noises and its stopping rule.

    ``numeric`` is ``"none"`` (output ⊤), ``"compared"`` (output qᵢ + νᵢ, the noisy value it
    just compared: Alg. 3) or ``"fresh"`` (output qᵢ + Lap(``numeric_scale``): SVT-S with ε₃ > 0).
    ``redraw_scale`` is the scale of a fresh threshold noise after each ⊤ (Alg. 2), or None.
    ``c`` is the number of ⊤ after which it stops, or None for never.
    """

    threshold_scale: float
    query_scale: float
    c: int | None
    redraw_scale: float | None = None
    numeric: str = "none"
    numeric_scale: float = 0.0


def _split(epsilon: float, first_share: float) -> tuple[float, float]:
    eps = check_epsilon(epsilon)
    return first_share * eps, (1 - first_share) * eps


def _alg1(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, e2 = _split(epsilon, 0.5)
    return NoiseSpec(threshold_scale=sensitivity / e1, query_scale=2 * c * sensitivity / e2, c=c)


def _alg2(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, e2 = _split(epsilon, 0.5)
    return NoiseSpec(
        threshold_scale=c * sensitivity / e1,
        query_scale=2 * c * sensitivity / e1,
        c=c,
        redraw_scale=c * sensitivity / e2,
    )


def _alg3(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, e2 = _split(epsilon, 0.5)
    return NoiseSpec(
        threshold_scale=sensitivity / e1, query_scale=c * sensitivity / e2, c=c, numeric="compared"
    )  # flaw: outputs qᵢ + νᵢ, the same noise the comparison used


def _alg4(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, e2 = _split(epsilon, 0.25)
    return NoiseSpec(
        threshold_scale=sensitivity / e1,
        query_scale=sensitivity / e2,  # flaw: query noise does not grow with c
        c=c,
    )


def _alg5(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, _ = _split(epsilon, 0.5)
    return NoiseSpec(
        threshold_scale=sensitivity / e1,
        query_scale=0.0,  # flaw: no noise on the query answers
        c=None,
    )  # flaw: never stops


def _alg6(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, e2 = _split(epsilon, 0.5)
    return NoiseSpec(
        threshold_scale=sensitivity / e1,
        query_scale=sensitivity / e2,  # flaw: query noise does not grow with the number of ⊤
        c=None,
    )  # flaw: never stops


def svt_standard_spec(
    epsilon: float,
    c: int,
    sensitivity: float = 1.0,
    *,
    numeric_epsilon: float | None = 0.0,
    monotonic: bool = False,
    ratio: float | None = None,
) -> NoiseSpec:
    """SVT-S (Lyu et al. 2017): ρ = Lap(Δ/ε₁), νᵢ = Lap(2cΔ/ε₂) (cΔ/ε₂ for monotonic queries), stop after c ⊤.

    ε = ε₁ + ε₂ is split as ε₁ : ε₂ = 1 : ``ratio``, by default their optimum 1 : (2c)^{2/3}
    (1 : c^{2/3} for monotonic queries). With ``numeric_epsilon`` ε₃ > 0 each ⊤ is released
    as qᵢ + Lap(cΔ/ε₃), for a total of ε + ε₃.
    """
    c = check_integer(c, "c", minimum=1)
    r = ((c if monotonic else 2 * c) ** (2 / 3)) if ratio is None else check_positive(ratio, "ratio")
    e1, e2 = _split(epsilon, 1 / (1 + r))
    sensitivity = check_positive(sensitivity, "sensitivity")
    eps3 = check_nonnegative(numeric_epsilon, "numeric_epsilon")
    return NoiseSpec(
        threshold_scale=sensitivity / e1,
        query_scale=(1 if monotonic else 2) * c * sensitivity / e2,
        c=c,
        numeric="fresh" if eps3 > 0 else "none",
        numeric_scale=c * sensitivity / eps3 if eps3 > 0 else 0.0,
    )


def _laplace_noise(gen: np.random.Generator, scale: float, size: int | tuple[int, ...]) -> np.ndarray:
    """Lap(0, scale) draws as scale·(E₁ − E₂), the difference of two standard exponentials.

    The same distribution as ``gen.laplace(0, scale, size)`` (the difference of two independent
    Exp(1) variables is a standard Laplace), about twice as fast: NumPy's exponential is a ziggurat
    that rarely needs a logarithm, its Laplace takes one per draw. It consumes the generator
    differently, so the same seed gives other draws than ``gen.laplace``.
    """
    noise = gen.standard_exponential(size)
    noise -= gen.standard_exponential(size)
    noise *= scale
    return noise


def run_spec(
    spec: NoiseSpec, answers: ArrayLike, *, threshold: ArrayLike, trials: int, rng: RngLike = None
) -> np.ndarray:
    """Run the algorithm described by ``spec`` on ``answers``, ``trials`` times at once.

    The queries are visited in order (each depends on how many ⊤ came before), every step
    vectorised over the trials. Returns the ``(trials, m)`` output codes.
    """
    q, t = check_answers_and_threshold(answers, threshold)
    trials = check_trials(trials) or 1
    gen = as_generator(rng)
    m = q.size
    rho = _laplace_noise(gen, spec.threshold_scale, trials) if spec.threshold_scale > 0 else np.zeros(trials)
    nu = _laplace_noise(gen, spec.query_scale, (trials, m)) if spec.query_scale > 0 else np.zeros((trials, m))
    if spec.redraw_scale is None and spec.numeric != "fresh":
        # one threshold for the whole run: every comparison at once, then the stopping rule by a
        # running count (the ⊤ before query i decide whether it is answered). The noise array becomes
        # the output in place: no (trials, m) temporaries beyond the comparison's booleans.
        out = nu
        out += q
        above = out >= t + rho[:, None]
        if spec.numeric == "compared":
            np.copyto(out, BOTTOM, where=~above)
        else:
            np.take(_TOP_OR_BOTTOM, above.view(np.uint8), out=out)
        if spec.c is not None and m > 1:
            if m <= 64:  # a few long columns: a running count is faster than a cumsum along short rows
                count = np.zeros(trials, dtype=np.int32)
                for i in range(1, m):
                    count += above[:, i - 1]
                    np.copyto(out[:, i], HALTED, where=count >= spec.c)  # (a boolean index would build a list)
            else:
                np.copyto(out[:, 1:], HALTED, where=np.cumsum(above[:, :-1], axis=1, dtype=np.int64) >= spec.c)
        return out
    out = np.full((trials, m), HALTED)
    count = np.zeros(trials, dtype=np.int64)
    active = np.ones(trials, dtype=bool)
    for i in range(m):
        above = q[i] + nu[:, i] >= t[i] + rho
        out[active & ~above, i] = BOTTOM
        hit = active & above
        if spec.numeric == "compared":
            out[hit, i] = q[i] + nu[hit, i]
        elif spec.numeric == "fresh":
            out[hit, i] = q[i] + _laplace_noise(gen, spec.numeric_scale, int(hit.sum()))
        else:
            out[hit, i] = TOP
        count += hit
        if spec.redraw_scale is not None:
            rho[hit] = _laplace_noise(gen, spec.redraw_scale, int(hit.sum()))
        if spec.c is not None:
            active &= count < spec.c
            if not active.any():  # every run has stopped: the rest stays "not answered" (and draws nothing)
                break
    return out


@dataclass(frozen=True)
class Variant:
    """One SVT variant: where it comes from, what it claims, what is true, and how to run it.

    ``true_epsilon(epsilon, c)`` is the privacy it really has according to Lyu et al. (``inf``
    when no finite ε′ holds); ``spec(epsilon, c, sensitivity)`` gives its :class:`NoiseSpec`.
    """

    key: str
    name: str
    source: str
    claim: str
    truth: str
    flaw: str | None
    spec: Callable[[float, int, float], NoiseSpec] = field(repr=False)
    true_epsilon: Callable[[float, int], float] = field(repr=False)

    @property
    def is_private(self) -> bool:
        return self.flaw is None

    def run(
        self,
        answers: ArrayLike,
        *,
        threshold: ArrayLike,
        epsilon: float,
        c: int,
        sensitivity: float = 1.0,
        trials: int = 1,
        rng: RngLike = None,
    ) -> np.ndarray:
        """Outputs of ``trials`` runs, shape ``(trials, m)``, coded ⊥ = −∞, ⊤ = +∞, halted = NaN, or a number."""
        c = check_integer(c, "c", minimum=1)
        spec = self.spec(epsilon, c, check_positive(sensitivity, "sensitivity"))
        return run_spec(spec, answers, threshold=threshold, trials=check_integer(trials, "trials", minimum=1), rng=rng)


VARIANTS: dict[str, Variant] = {
    v.key: v
    for v in (
        Variant(
            "alg1", "Alg. 1 (SVT of Lyu et al.)", "Lyu, Su & Li 2017", "ε-DP", "ε-DP", None, _alg1, lambda eps, c: eps
        ),
        Variant(
            "alg2",
            "Alg. 2 (Dwork & Roth's Sparse)",
            "Dwork & Roth 2014",
            "ε-DP",
            "ε-DP",
            None,
            _alg2,
            lambda eps, c: eps,
        ),
        Variant(
            "alg3",
            "Alg. 3 (Roth's lecture notes)",
            "Roth 2011",
            "ε-DP",
            "not ε′-DP for any ε′",
            "outputs qᵢ + νᵢ, revealing the noise it compared with",
            _alg3,
            lambda eps, c: np.inf,
        ),
        Variant(
            "alg4",
            "Alg. 4 (Lee & Clifton)",
            "Lee & Clifton 2014",
            "ε-DP",
            "((1 + 6c)/4)·ε-DP",
            "query noise Lap(Δ/ε₂) does not grow with c",
            _alg4,
            lambda eps, c: (1 + 6 * c) / 4 * eps,
        ),
        Variant(
            "alg5",
            "Alg. 5 (Stoddard et al.)",
            "Stoddard et al. 2014",
            "ε-DP",
            "not ε′-DP for any ε′",
            "no noise on the query answers",
            _alg5,
            lambda eps, c: np.inf,
        ),
        Variant(
            "alg6",
            "Alg. 6 (Chen et al.)",
            "Chen et al. 2015",
            "ε-DP",
            "not ε′-DP for any ε′",
            "query noise does not grow with the number of ⊤, and it never stops",
            _alg6,
            lambda eps, c: np.inf,
        ),
        Variant(
            "svt_s",
            "SVT-S (standard SVT)",
            "Lyu, Su & Li 2017",
            "ε-DP",
            "ε-DP",
            None,
            lambda eps, c, s: svt_standard_spec(eps, c, s),
            lambda eps, c: eps,
        ),
    )
}


def svt_standard(
    answers: ArrayLike,
    *,
    threshold: ArrayLike,
    epsilon: float,
    c: int,
    sensitivity: float = 1.0,
    numeric_epsilon: float = 0.0,
    monotonic: bool = False,
    ratio: float | None = None,
    trials: int = 1,
    rng: RngLike = None,
) -> np.ndarray:
    """Run SVT-S with a chosen budget allocation (see :func:`svt_standard_spec`); outputs as :meth:`Variant.run`."""
    spec = svt_standard_spec(epsilon, c, sensitivity, numeric_epsilon=numeric_epsilon, monotonic=monotonic, ratio=ratio)
    return run_spec(spec, answers, threshold=threshold, trials=trials, rng=rng)


def svt_retraversal(
    answers: ArrayLike,
    *,
    threshold: ArrayLike,
    epsilon: float,
    c: int,
    monotonic: bool,
    sensitivity: float = 1.0,
    raise_by: float = 0.0,
    max_passes: int = 10,
    trials: int = 1,
    rng: RngLike = None,
) -> np.ndarray:
    """SVT-S with retraversal (Lyu et al.'s SVT-ReTr): scan the list again until c items are chosen.

    The threshold is raised by ``raise_by``·D, with D the standard deviation √2·b of the query
    noise Lap(b) (Lyu et al. try 1D, 3D and 5D), so that the first pass takes fewer low items.
    One noisy threshold for the whole run; each look at an item gets fresh query noise, and an
    item already chosen is skipped. It is SVT-S on the list repeated ``max_passes`` times, so it
    is ε-DP exactly when SVT-S is: ``monotonic`` must be said, because ``monotonic=True`` uses
    SVT-S's halved query noise Lap(cΔ/ε₂) and allocation 1 : c^{2/3}, which is ε-DP only if every
    answer moves in the same direction between neighbours (counts under adding a person);
    ``monotonic=False`` uses Lap(2cΔ/ε₂) and 1 : (2c)^{2/3}. Returns a boolean ``(trials, m)``
    array of the chosen items.

    Sampling: given the threshold noise ρ, every look at item i is above the threshold
    independently with the same probability pᵢ = Pr[qᵢ + ν ≥ T + ρ], so the pass Gᵢ in which
    item i is first above is Geometric(pᵢ), and the passes choose, in order of (pass, position),
    the first c items with Gᵢ ≤ ``max_passes`` (a later look at a chosen item is skipped, and the
    run ends when the c-th item is chosen). Drawing ρ and one Gᵢ per item and trial, by inversion
    of (1 − pᵢ)^k, gives the same distribution as scanning pass by pass with fresh Laplace noise
    (``tests/test_svt_variants.py`` compares the two), from one ``(trials, m)`` draw.
    """
    q, t = check_answers_and_threshold(answers, threshold)
    if not isinstance(monotonic, (bool, np.bool_)):
        raise TypeError(f"monotonic must be True or False; got {monotonic!r}")
    spec = svt_standard_spec(epsilon, c, sensitivity, monotonic=bool(monotonic))
    t = t + check_nonnegative(raise_by, "raise_by") * np.sqrt(2) * spec.query_scale
    trials = check_integer(trials, "trials", minimum=1)
    passes = check_integer(max_passes, "max_passes", minimum=1)
    gen = as_generator(rng)
    rho = _laplace_noise(gen, spec.threshold_scale, (trials, 1))
    # one look is below the threshold when ν < x = T + ρ − q: ln Pr = ln F(x) for the Laplace CDF F,
    # written without cancellation on both sides of 0
    x = (t + rho - q) / spec.query_scale
    with np.errstate(divide="ignore", invalid="ignore"):
        log_below = np.where(x < 0, x - np.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(x))))
        # G = 1 + ⌊ln U / ln(1 − p)⌋ with U uniform on (0, 1]: Pr[G > k] = (1 − p)^k
        first_pass = 1.0 + np.floor(np.log1p(-gen.random(size=x.shape)) / log_below)
    first_pass[log_below == 0.0] = np.inf  # p = 0 to rounding: never above
    order = np.where(first_pass <= passes, (first_pass - 1.0) * q.size + np.arange(q.size), np.inf)
    if c < q.size:
        cutoff = np.partition(order, c - 1, axis=1)[:, c - 1 : c]
        return np.isfinite(order) & (order <= cutoff)
    return np.isfinite(order)


def format_outputs(row: ArrayLike) -> str:
    """One run's outputs as text: ⊥, ⊤, · (not answered) or the released number."""

    def one(v: float) -> str:
        if np.isnan(v):
            return "·"
        if np.isinf(v):
            return "⊤" if v > 0 else "⊥"
        return f"{v:.2f}"

    return " ".join(one(v) for v in np.asarray(row, dtype=float))


# --------------------------------------------------------------------------------------
# Utility of SVT for selecting the top c of many counts (Lyu et al.'s experiments)
# --------------------------------------------------------------------------------------
def zipf_counts(num_items: int, total: int, *, exponent: float = 1.1, rng: RngLike = None) -> np.ndarray:
    """Item counts of ``total`` records drawn from a Zipf law over ``num_items`` items (item i ∝ (i + 1)^−s)."""
    k = check_integer(num_items, "num_items", minimum=2)
    n = check_integer(total, "total", minimum=1)
    weights = np.arange(1, k + 1, dtype=float) ** -check_positive(exponent, "exponent")
    return as_generator(rng).multinomial(n, weights / weights.sum()).astype(float)


def top_c_mask(counts: ArrayLike, c: int) -> np.ndarray:
    """The true top c items (ties broken by index), as a boolean mask."""
    counts = check_array(counts, "counts", ndim=1)
    mask = np.zeros(counts.size, dtype=bool)
    mask[np.argsort(-counts, kind="stable")[: check_integer(c, "c", minimum=1, maximum=counts.size)]] = True
    return mask


def f_measure(selected: ArrayLike, truth: ArrayLike) -> np.ndarray:
    """Harmonic mean of precision and recall of ``selected`` (``(trials, k)`` masks) against the ``truth`` mask."""
    truth = check_binary(truth, "truth").astype(bool)
    selected = check_binary(selected, "selected").astype(bool)
    if truth.ndim != 1 or selected.ndim not in (1, 2) or selected.shape[-1] != truth.size:
        raise ValueError(
            f"truth must be one mask of length k and selected one or many of length k; got shapes "
            f"{truth.shape} and {selected.shape}"
        )
    hits = np.sum(selected & truth, axis=-1)
    precision = np.where(selected.sum(axis=-1) > 0, hits / np.maximum(selected.sum(axis=-1), 1), 0.0)
    recall = hits / max(int(np.sum(truth)), 1)
    return np.where(hits > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-300), 0.0)


def normalized_cumulative_support(selected: ArrayLike, counts: ArrayLike, c: int) -> np.ndarray:
    """NCS: the true counts of the selected items over the true counts of the top c (Lyu et al.)."""
    counts = check_array(counts, "counts", ndim=1)
    best = np.sort(counts)[::-1][: check_integer(c, "c", minimum=1, maximum=counts.size)].sum()
    return np.sum(_selection_masks(selected, counts.size) * counts, axis=-1) / best


def _selection_masks(selected: ArrayLike, k: int) -> np.ndarray:
    """One 0/1 mask of length k, or a ``(trials, k)`` array of them, as booleans."""
    masks = check_binary(selected, "selected").astype(bool)
    if masks.ndim not in (1, 2) or masks.shape[-1] != k:
        raise ValueError(
            f"selected must be one mask of length {k} or a (trials, {k}) array of them; got shape {masks.shape}"
        )
    return masks


def normalized_cumulative_rank(selected: ArrayLike, counts: ArrayLike, c: int) -> np.ndarray:
    """NCR (Lyu et al.): the ranks of the selected items over the ranks of the true top c.

    The true top item has rank c, the next c − 1, …, the c-th rank 1, and every other item 0;
    the sum over the selected items is divided by the largest possible, c(c + 1)/2. Unlike NCS
    it does not forgive missing a top item for a near-tie with a lower one.
    """
    counts = check_array(counts, "counts", ndim=1)
    c = check_integer(c, "c", minimum=1, maximum=counts.size)
    rank = np.zeros(counts.size)
    rank[np.argsort(-counts, kind="stable")[:c]] = np.arange(c, 0, -1)
    return np.sum(_selection_masks(selected, counts.size) * rank, axis=-1) / (c * (c + 1) / 2)
