"""The SVT-family test suites of three published auditors, re-implemented as vectorised mechanisms.

Each entry is a thin re-implementation of one mechanism of StatDP (cmla-psu/statdp, commit d1f1e8f),
DP-Sniper (eth-sri/dp-sniper) or CheckDP (cmla-psu/checkdp, commit 6375d1f), written from their
source and citing file and lines: the same noise, the same comparisons (``>=`` or ``>``), the same
stopping rule and the same output, including each peer's post-processing (StatDP's counts and
Hamming distances, DP-Sniper's −1/−1000/−2000 codes, CheckDP's −100 for ⊥). Only the shape
differs: one call returns ``(trials, …)`` outputs from one vectorised draw, so every entry is a
``mechanism(answers, *, trials, rng)`` for :func:`dpcourse.audit.audit`. A halted position, which
the peers leave out of a shorter list, is NaN.

Each entry's ``epsilon`` is the smallest ε its suite uses: StatDP 0.2, its smallest claimed ε in
``examples/benchmark.py``; DP-Sniper 0.1, the default of every mechanism; CheckDP 1, the ε of the PSI
programs that validate its counterexamples (``examples/*.psi``: ``epsilon := 1``). CheckDP's checker is
symbolic in ε, so :func:`checkdp_mechanisms` builds its examples at any ε: at ε = 0.2 the auditor flags
BadSparseVector1–3, while BadGap is out of any sampler's reach with 10⁶ runs (its largest violation over
pairs (a^{m−1}, b) / ((a + 1)^{m−1}, b) with events "⊥^{m−1}, then a value ≤ v" has an expected z of 1.67
with 10⁶ test runs, below the 2.58 the test needs; computed exactly with
:func:`dpcourse.svt.variant_pattern_probability`),
and BadAdaptive is out of reach even at ε = 1 (expected z 0.33, or 0.42 when its top query moves too; 0.04
at ε = 0.2): ``tests/audit/test_auditor.py`` asserts each. ``flawed`` says whether the peer marks it incorrect.

Longer than 400 lines because it is one catalogue: 22 peer mechanisms and 9 of CheckDP at any ε, each citing its source.
Split by peer, the table that ``tests/audit/test_auditor.py`` checks entry by entry would be scattered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from .._validation import ArrayLike, RngLike, as_generator, check_array, check_integer, check_positive

__all__ = ["PEER_MECHANISMS", "PeerMechanism", "checkdp_mechanisms"]


@dataclass(frozen=True)
class PeerMechanism:
    """One mechanism of a peer's suite: where it is, what it claims, and a vectorised runner.

    Calling it, ``mechanism(answers, *, trials, rng=None)``, checks the arguments (``answers`` a non-empty 1-D
    array of finite numbers, ``trials`` an integer ≥ 1, ``rng`` a seed or generator) and returns the
    ``(trials, …)`` outputs of ``run``: it is a mechanism for :func:`dpcourse.audit.audit`.

    Attributes
    ----------
    key : str
        Its key in :data:`PEER_MECHANISMS` (``statdp_…``, ``dpsniper_…``, ``checkdp_…``).
    suite : str
        The peer: ``"StatDP"``, ``"DP-Sniper"`` or ``"CheckDP"``.
    source : str
        The file and lines of the peer's source it re-implements, with the parameters used.
    epsilon : float
        The ε it claims (and is run at).
    flawed : bool
        Whether the peer marks it incorrect.
    note : str
        What it does, in a few words.
    run : callable
        ``run(answers, trials, generator)``, the vectorised mechanism without checks.
    """

    key: str
    suite: str
    source: str
    epsilon: float
    flawed: bool
    note: str
    run: Callable = field(repr=False)

    def __call__(self, answers: ArrayLike, *, trials: int, rng: RngLike = None) -> np.ndarray:
        return self.run(
            check_array(answers, "answers", ndim=1, min_size=1),
            check_integer(trials, "trials", minimum=1),
            as_generator(rng),
        )


def _compare(q: np.ndarray, t: float, rho: np.ndarray, nu: np.ndarray | float, strict: bool) -> np.ndarray:
    lhs = q + nu
    return lhs > t + rho if strict else lhs >= t + rho


def _answered(above: np.ndarray, c: int | None) -> np.ndarray:
    """Which positions are answered when the run stops after c ⊤ (all, for c None)."""
    if c is None:
        return np.ones_like(above)
    return np.cumsum(above, axis=1) - above < c


def _lap(gen: np.random.Generator, scale: float, shape: int | tuple[int, ...]) -> np.ndarray:
    return gen.laplace(0.0, scale, size=shape)


# --- StatDP: statdp/algorithms.py -----------------------------------------------------
def _statdp_pattern(m: int) -> np.ndarray:
    return np.arange(m) < m // 2  # `true_count = int(len(queries) / 2)`: the first half True


def _statdp_svt(
    eps: float, n_above: int = 1, t: float = 0.5
) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    def run(
        q: np.ndarray, trials: int, gen: np.random.Generator
    ) -> np.ndarray:  # algorithms.py lines 62-76: returns out.count(False)
        above = _compare(q, t, _lap(gen, 2 / eps, (trials, 1)), _lap(gen, 4 * n_above / eps, (trials, q.size)), False)
        return np.sum(~above & _answered(above, n_above), axis=1)

    return run


def _statdp_isvt(
    eps: float, rho_scale: float, nu_scale: float, strict: bool, n_above: int | None, t: float = 1.0
) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    def run(
        q: np.ndarray, trials: int, gen: np.random.Generator
    ) -> np.ndarray:  # lines 79-129: Hamming distance (zip_longest) to the first-half-True pattern
        nu = _lap(gen, nu_scale, (trials, q.size)) if nu_scale else 0.0
        above = _compare(q, t, _lap(gen, rho_scale, (trials, 1)), nu, strict)
        answered = _answered(above, n_above)
        return np.sum((above != _statdp_pattern(q.size)) & answered | ~answered, axis=1)

    return run


def _statdp_isvt4(
    eps: float, n_above: int = 1, t: float = 1.0
) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    def run(
        q: np.ndarray, trials: int, gen: np.random.Generator
    ) -> np.ndarray:  # lines 132-147: (out.count(False), out[-1]); out[-1] is q + η₂ or False (0)
        noisy = q + _lap(gen, 2 * n_above / eps, (trials, q.size))
        above = noisy > t + _lap(gen, 2 / eps, (trials, 1))
        answered = _answered(above, n_above)
        last = np.where(answered, np.arange(q.size), -1).max(axis=1)
        rows = np.arange(trials)
        last_value = np.where(above[rows, last], noisy[rows, last], 0.0)
        return np.column_stack([np.sum(~above & answered, axis=1), last_value])

    return run


# --- DP-Sniper: dpsniper/mechanisms/sparse_vector_technique.py, parallel.py ------------
def _sniper_svt(
    eps: float, c: int, t: float, kind: str
) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    share = 0.25 if kind == "svt4" else 0.5
    e1, e2 = share * eps, (1 - share) * eps

    def run(q: np.ndarray, trials: int, gen: np.random.Generator) -> np.ndarray:
        if kind == "svt2":  # lines 53-103: the threshold noise is redrawn after every TRUE
            rho = _lap(gen, c / e1, trials)
            nu = _lap(gen, 2 * c / e2, (trials, q.size))
            out = np.empty((trials, q.size))
            count, aborted = np.zeros(trials), np.zeros(trials, dtype=bool)
            for i in range(q.size):
                cmp = q[i] + nu[:, i] >= rho + t
                out[:, i] = np.where(aborted, -1, cmp)
                count += cmp
                fresh = _lap(gen, c / e1, trials)
                rho[cmp] = fresh[cmp]
                aborted |= count == c
            return out
        rho = _lap(gen, 1 / e1, (trials, 1))
        nu_scale = {"svt1": 2 * c / e2, "svt3": c / e2, "svt4": 1 / e2, "svt5": 0.0, "svt6": 1 / e2}[kind]
        noisy = q + (_lap(gen, nu_scale, (trials, q.size)) if nu_scale else 0.0)
        cmp = noisy >= rho + t
        if kind in ("svt5", "svt6"):  # lines 203-272: never abort, 1/0
            return cmp.astype(int)
        answered = _answered(cmp, c)
        if kind == "svt3":  # lines 106-152: the noisy answer, -1000 FALSE, -2000 ABORTED
            return np.where(answered, np.where(cmp, noisy, -1000.0), -2000.0)
        return np.where(answered, cmp.astype(int), -1)  # lines 5-50, 155-200: 1/0, -1 ABORTED

    return run


def _sniper_numerical(
    eps: float, c: int = 2, t: float = 1.0
) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    def run(
        q: np.ndarray, trials: int, gen: np.random.Generator
    ) -> np.ndarray:  # lines 275-319: the value q + Lap(3c/ε) when above, 0 below, -1000 aborted
        cmp = q + _lap(gen, 6 * c / eps, (trials, q.size)) >= t + _lap(gen, 3 / eps, (trials, 1))
        released = q + _lap(gen, 3 * c / eps, (trials, q.size))
        return np.where(_answered(cmp, c), np.where(cmp, released, 0.0), -1000.0)

    return run


def _sniper_svt34(
    eps: float, c: int = 2, t: float = 1.0
) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    svt3, svt4 = _sniper_svt(eps, c, t, "svt3"), _sniper_svt(eps, c, t, "svt4")

    def run(
        q: np.ndarray, trials: int, gen: np.random.Generator
    ) -> np.ndarray:  # parallel.py lines 44-54: both mechanisms' outputs side by side
        return np.column_stack([svt3(q, trials, gen), svt4(q, trials, gen)])

    return run


# --- CheckDP: examples/*.c --------------------------------------------------------------
def _checkdp_svt(
    eps: float, n_above: int, t: float, *, nu_scale: float | None, rho_scale: float, output: str, stops: bool = True
) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    def run(q: np.ndarray, trials: int, gen: np.random.Generator) -> np.ndarray:
        rho = _lap(gen, rho_scale, (trials, 1))
        noisy = q + (_lap(gen, nu_scale, (trials, q.size)) if nu_scale else 0.0)
        above = noisy >= t + rho
        answered = _answered(above, n_above if stops else None)
        shown: float | np.ndarray
        if output == "bit":
            shown, below = 1.0, 0.0
        elif output == "gap":
            shown, below = noisy - (t + rho), 0.0
        elif output == "noisy":  # the flaw: the compared value itself
            shown, below = noisy, -100.0
        else:  # "fresh": NumSVT's independent Lap(3N/ε) for the released value
            shown, below = q + _lap(gen, 3 * n_above / eps, (trials, q.size)), 0.0
        return np.where(answered, np.where(above, shown, below), np.nan)

    return run


def _checkdp_adaptive(
    eps: float, n_above: int, t: float, *, bad: bool
) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    def run(
        q: np.ndarray, trials: int, gen: np.random.Generator
    ) -> np.ndarray:  # adaptivesparsevector.c lines 7-38 / badadaptivesparsevector.c lines 7-39
        noisy_t = t + _lap(gen, 2 / eps, trials)
        eta_3 = _lap(gen, 8 * n_above / eps, (trials, q.size))
        eta_2 = _lap(gen, 4 * n_above / eps, (trials, q.size))
        out = np.full((trials, q.size), np.nan)
        cost = np.full(trials, 2.0 * eps * n_above)
        live = np.ones(trials, dtype=bool)
        for i in range(q.size):
            top = live & (q[i] + eta_3[:, i] - noisy_t >= 16)
            middle = live & ~top & (q[i] + eta_2[:, i] - noisy_t >= 0)
            below = live & ~top & ~middle
            out[top, i] = q[i] + eta_3[top, i] if bad else q[i] + eta_3[top, i] - noisy_t[top]
            out[middle, i] = q[i] + eta_2[middle, i] - noisy_t[middle]
            out[below, i] = -100.0 if bad else 0.0
            cost += np.where(top, eps, np.where(middle, 2 * eps, 0.0))
            live &= ~(cost > 4 * n_above * eps - 2 * eps)
        return out

    return run


def _entries() -> Iterator[PeerMechanism]:
    e = 0.2
    statdp = "statdp/algorithms.py"
    yield PeerMechanism(
        "statdp_svt",
        "StatDP",
        f"{statdp} lines 62-76 (N = 1, T = 0.5)",
        e,
        False,
        "Lyu et al.'s Alg. 1 with c = 1; outputs the number of False",
        _statdp_svt(e),
    )
    yield PeerMechanism(
        "statdp_isvt1",
        "StatDP",
        f"{statdp} lines 79-92 (T = 1)",
        e,
        True,
        "no query noise, no cap (Lyu et al.'s Alg. 5); Hamming distance to the first-half-True pattern",
        _statdp_isvt(e, 2 / e, 0.0, False, None),
    )
    yield PeerMechanism(
        "statdp_isvt2",
        "StatDP",
        f"{statdp} lines 95-109 (T = 1)",
        e,
        True,
        "query noise Lap(2/ε), no cap (Alg. 6); Hamming distance",
        _statdp_isvt(e, 2 / e, 2 / e, False, None),
    )
    yield PeerMechanism(
        "statdp_isvt3",
        "StatDP",
        f"{statdp} lines 112-129 (N = 1, T = 1)",
        e,
        True,
        "query noise Lap(4/(3ε)) does not grow with N (Alg. 4); Hamming distance",
        _statdp_isvt(e, 4 / e, 4 / (3 * e), True, 1),
    )
    yield PeerMechanism(
        "statdp_isvt4",
        "StatDP",
        f"{statdp} lines 132-147 (N = 1, T = 1)",
        e,
        True,
        "outputs the noisy query (Alg. 3); (number of False, last output)",
        _statdp_isvt4(e),
    )
    e = 0.1
    svt = "dpsniper/mechanisms/sparse_vector_technique.py"
    runs = "dpsniper/experiments/exp_default.py lines 62-71"
    for key, lines, c, t, flawed, note in [
        ("svt1", "5-50", 1, 0.5, False, "Alg. 1"),
        ("svt2", "53-103", 1, 1.0, False, "Alg. 2"),
        ("svt3", "106-152", 1, 1.0, True, "Alg. 3: outputs the noisy query"),
        ("svt4", "155-200", 1, 1.0, True, "Alg. 4: ε₁ = ε/4, query noise Lap(1/ε₂)"),
        ("svt5", "203-235", 1, 1.0, True, "Alg. 5: no query noise, no cap"),
        ("svt6", "238-272", 1, 1.0, True, "Alg. 6: query noise Lap(1/ε₂), no cap"),
    ]:
        yield PeerMechanism(
            f"dpsniper_{key}",
            "DP-Sniper",
            f"{svt} lines {lines}; c = {c}, t = {t:g} as in {runs}",
            e,
            flawed,
            note,
            _sniper_svt(e, c, t, key),
        )
    yield PeerMechanism(
        "dpsniper_svt34parallel",
        "DP-Sniper",
        "dpsniper/mechanisms/parallel.py lines 44-54 (c = 2, t = 1)",
        e,
        True,
        "SVT3 and SVT4 run side by side",
        _sniper_svt34(e),
    )
    yield PeerMechanism(
        "dpsniper_numerical_svt",
        "DP-Sniper",
        f"{svt} lines 275-319 (c = 2, t = 1)",
        e,
        False,
        "NumericalSVT (Wang et al. 2019): fresh noise for the released value",
        _sniper_numerical(e),
    )
    yield from checkdp_mechanisms(1.0).values()


def checkdp_mechanisms(epsilon: float) -> dict[str, PeerMechanism]:
    """CheckDP's sparse-vector examples (N = 1 or 2, T = 1) at a chosen ε, by key.

    :data:`PEER_MECHANISMS` holds them at ε = 1, the ε of CheckDP's PSI programs; CheckDP's checker
    is symbolic in ε, so any ε > 0 is one of its claims (the C sources' ``int`` casts of the threshold
    and of the cost counter are not reproduced: the PSI programs use real numbers).

    Parameters
    ----------
    epsilon : float
        The ε they claim and are run at, > 0.

    Returns
    -------
    dict of str to PeerMechanism
        CheckDP's nine examples, by key (``checkdp_…``).

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0.
    TypeError
        If ``epsilon`` is not a real number.
    """
    return {entry.key: entry for entry in _checkdp_entries(check_positive(epsilon, "epsilon"))}


def _checkdp_entries(e: float) -> Iterator[PeerMechanism]:
    n, t = 1, 1.0
    ex = "examples/{}.c"
    yield PeerMechanism(
        "checkdp_sparsevector",
        "CheckDP",
        ex.format("sparsevector") + " lines 7-27",
        e,
        False,
        "SVT, outputs 1/0",
        _checkdp_svt(e, n, t, nu_scale=4 * n / e, rho_scale=2 / e, output="bit"),
    )
    yield PeerMechanism(
        "checkdp_gapsparsevector",
        "CheckDP",
        ex.format("gapsparsevector") + " lines 7-27",
        e,
        False,
        "Gap SVT: outputs the gap q + η₂ − T̂",
        _checkdp_svt(e, n, t, nu_scale=4 * n / e, rho_scale=2 / e, output="gap"),
    )
    yield PeerMechanism(
        "checkdp_numsparsevector",
        "CheckDP",
        ex.format("numsparsevector") + " lines 7-26",
        e,
        False,
        "NumSVT: fresh Lap(3N/ε) for the released value",
        _checkdp_svt(e, n, t, nu_scale=6 * n / e, rho_scale=3 / e, output="fresh"),
    )
    yield PeerMechanism(
        "checkdp_adaptivesparsevector",
        "CheckDP",
        ex.format("adaptivesparsevector") + " lines 7-38 (N = 2)",
        e,
        False,
        "Adaptive SVT: two thresholds, a cost counter",
        _checkdp_adaptive(e, 2, t, bad=False),
    )
    yield PeerMechanism(
        "checkdp_badgapsparsevector",
        "CheckDP",
        ex.format("badgapsparsevector") + " lines 7-29",
        e,
        True,
        "outputs q + η₂ instead of the gap",
        _checkdp_svt(e, n, t, nu_scale=4 * n / e, rho_scale=2 / e, output="noisy"),
    )
    yield PeerMechanism(
        "checkdp_badadaptivesparsevector",
        "CheckDP",
        ex.format("badadaptivesparsevector") + " lines 7-39 (N = 2)",
        e,
        True,
        "outputs q + η₃ in the top branch",
        _checkdp_adaptive(e, 2, t, bad=True),
    )
    yield PeerMechanism(
        "checkdp_badsparsevector1",
        "CheckDP",
        ex.format("badsparsevector1") + " lines 7-28",
        e,
        True,
        "no query noise, no cap",
        _checkdp_svt(e, n, t, nu_scale=0.0, rho_scale=2 / e, output="bit", stops=False),
    )
    yield PeerMechanism(
        "checkdp_badsparsevector2",
        "CheckDP",
        ex.format("badsparsevector2") + " lines 7-29",
        e,
        True,
        "query noise Lap(2/ε), no cap",
        _checkdp_svt(e, n, t, nu_scale=2 / e, rho_scale=2 / e, output="bit", stops=False),
    )
    yield PeerMechanism(
        "checkdp_badsparsevector3",
        "CheckDP",
        ex.format("badsparsevector3") + " lines 7-28",
        e,
        True,
        "query noise Lap(4/(3ε)) does not grow with N",
        _checkdp_svt(e, n, t, nu_scale=4 / (3 * e), rho_scale=4 / e, output="bit"),
    )


PEER_MECHANISMS: dict[str, PeerMechanism] = {entry.key: entry for entry in _entries()}
"""Every SVT-family mechanism of the three suites, by key (``statdp_…``, ``dpsniper_…``, ``checkdp_…``)."""
