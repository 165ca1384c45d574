"""The auditor itself: StatDP's input pairs, screening them (successive halving), selecting the event,
testing it on fresh runs; :func:`audit`, :func:`scan` and :func:`pattern_frequency`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_array,
    check_epsilon,
    check_integer,
    check_neighbouring_answers,
    check_positive,
    check_probability,
)
from ..mechanisms import proportion_interval
from ..svt import VARIANTS, Variant
from ..svt.exact_variants import (
    PatternEntry,
    _pattern_items,
)
from .encoding import _as_outputs, _Encoder
from .events import _best_event, _Candidate
from .result import AuditResult, ScanResult
from .statistics import thinned_fisher_p_value


def statdp_pairs(
    num_queries: Sequence[int] | int = (5, 10), *, sensitivity: float = 1.0
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """StatDP's family of neighbouring inputs, for each length in ``num_queries``.

    Re-implemented from ``statdp/generators.py``, ``generate_databases`` (cmla-psu/statdp, lines
    57–82 at commit d1f1e8f): D = (1, …, 1) against D′ = one below (0, 1, …), one above (2, 1, …),
    one above rest below (2, 0, …), one below rest above (0, 2, …), half and half (2^⌊m/2⌋, 0^…),
    all above (2, …), all below (0, …), and the X shape (1^⌊m/2⌋, 0^⌈m/2⌉) against
    (0^⌊m/2⌋, 1^⌈m/2⌉). Order matters for SVT, so the patterns keep StatDP's orientation; the
    auditor tests both directions of every event, which covers swapping D and D′. Values are
    multiples of ``sensitivity`` (Δ); StatDP's lengths are 5 and 10.

    Parameters
    ----------
    num_queries : int or sequence of int, optional
        The length m of the inputs, or several lengths, each ≥ 1 (default 5 and 10).
    sensitivity : float, optional
        The sensitivity Δ, > 0 (default 1).

    Returns
    -------
    dict
        Eight pairs per length, by name (e.g. ``"one below (m = 5)"``): each ``(answers_d, answers_d_prime)``,
        two arrays of shape ``(m,)``.

    Raises
    ------
    ValueError
        If a length is not an integer ≥ 1 or ``sensitivity`` is not a finite number > 0.
    TypeError
        If a length is not an integer or ``sensitivity`` is not a real number.
    """
    delta_q = check_positive(sensitivity, "sensitivity")
    lengths = (num_queries,) if isinstance(num_queries, int) or np.ndim(num_queries) == 0 else tuple(num_queries)
    pairs = {}
    for m in lengths:
        m = check_integer(m, "num_queries", minimum=1)
        ones, half, rest = np.ones(m), m // 2, m - m // 2
        for name, d_prime in [
            ("one below", np.r_[0.0, np.ones(m - 1)]),
            ("one above", np.r_[2.0, np.ones(m - 1)]),
            ("one above rest below", np.r_[2.0, np.zeros(m - 1)]),
            ("one below rest above", np.r_[0.0, np.full(m - 1, 2.0)]),
            ("half and half", np.r_[np.full(half, 2.0), np.zeros(rest)]),
            ("all above", np.full(m, 2.0)),
            ("all below", np.zeros(m)),
        ]:
            pairs[f"{name} (m = {m})"] = (delta_q * ones, delta_q * d_prime)
        pairs[f"X shape (m = {m})"] = (
            delta_q * np.r_[np.ones(half), np.zeros(rest)],
            delta_q * np.r_[np.zeros(half), np.ones(rest)],
        )
    return pairs


_FINALISTS = 4  # input pairs that get the full selection runs after screening (see _audit)


def _as_mechanism(
    mechanism: Any, epsilon: float, c: int, threshold: float, sensitivity: float
) -> tuple[Callable[..., Any], str]:
    if isinstance(mechanism, str):
        if mechanism not in VARIANTS:
            raise ValueError(
                f"mechanism must be a key of VARIANTS {sorted(VARIANTS)}, a Variant or a callable; got {mechanism!r}"
            )
        mechanism = VARIANTS[mechanism]
    if isinstance(mechanism, Variant):
        v = mechanism
        c = check_integer(c, "c", minimum=1)

        def run(answers: np.ndarray, *, trials: int, rng: np.random.Generator) -> np.ndarray:
            return v.run(
                answers, threshold=threshold, epsilon=epsilon, c=c, sensitivity=sensitivity, trials=trials, rng=rng
            )

        return run, v.key
    if not callable(mechanism):
        raise TypeError(f"mechanism must be a key of VARIANTS, a Variant or a callable; got {type(mechanism).__name__}")
    return mechanism, getattr(mechanism, "key", getattr(mechanism, "__name__", type(mechanism).__name__))


def _input_pairs(
    answers_d: ArrayLike | None, answers_d_prime: ArrayLike | None, pairs: Any, sensitivity: float
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    if pairs is not None:
        if answers_d is not None or answers_d_prime is not None:
            raise ValueError("give pairs, or answers_d and answers_d_prime, not both")
        listed = list(pairs.items()) if isinstance(pairs, dict) else [(f"pair {i}", p) for i, p in enumerate(pairs)]
        if not listed:
            raise ValueError("pairs must hold at least one (answers_d, answers_d_prime) pair")
        return [(name, *check_neighbouring_answers(d, d_prime, sensitivity)) for name, (d, d_prime) in listed]
    if answers_d is None and answers_d_prime is None:
        return [(name, d, d_prime) for name, (d, d_prime) in statdp_pairs(sensitivity=sensitivity).items()]
    if answers_d is None or answers_d_prime is None:
        raise ValueError("give both answers_d and answers_d_prime, or neither (to search StatDP's pairs)")
    return [("given", *check_neighbouring_answers(answers_d, answers_d_prime, sensitivity))]


def _finalist_pairs(scores: Sequence[tuple[float, float]]) -> list[int]:
    """Indices (in order) of the screened pairs that get the full selection runs: the best by the learned
    region and the best others by the families' events, _FINALISTS in all. ``scores`` are (families' z,
    learned z) per pair; outputs of one number learn nothing (z −∞), and then the families choose all."""
    by_families = sorted(range(len(scores)), key=lambda i: -scores[i][0])
    by_learned = max(range(len(scores)), key=lambda i: scores[i][1])
    if not np.isfinite(scores[by_learned][1]):
        return sorted(by_families[:_FINALISTS])
    return sorted([i for i in by_families if i != by_learned][: _FINALISTS - 1] + [by_learned])


def audit(
    mechanism: Any,
    answers_d: ArrayLike | None = None,
    answers_d_prime: ArrayLike | None = None,
    *,
    epsilon: float,
    trials: int = 200_000,
    selection_trials: int | None = None,
    rng: RngLike = None,
    level: float = 0.01,
    pairs: Any = None,
    c: int = 1,
    threshold: float = 1.0,
    sensitivity: float = 1.0,
    min_count: int = 10,
) -> AuditResult:
    """Test a mechanism's claim of ε-DP on neighbouring inputs; see the module docstring.

    Parameters
    ----------
    mechanism : str, Variant or callable
        A key of :data:`~dpcourse.svt.VARIANTS`, a variant, or any
        ``mechanism(answers, *, trials, rng)`` returning an array with one row per trial.
    answers_d, answers_d_prime : array_like, optional
        One neighbouring pair. With neither (and no ``pairs``), StatDP's family
        (:func:`statdp_pairs`: 8 patterns × lengths 5 and 10) is searched.
    epsilon : float
        The claimed ε (also the ε a variant is run at).
    trials : int, optional
        Fresh runs per input for the test of the chosen event, in [100, 10⁶] (default 200 000).
    selection_trials : int, optional
        Runs per input and per candidate pair for choosing the event, in [100, 10⁶]; default ``trials // 4``.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for every run (the mechanism's ``rng``).
    level : float, optional
        The test's level, in (0, 1) (default 0.01): a mechanism that keeps its claim is flagged with
        probability ≤ ``level``.
    pairs : list or dict of (answers_d, answers_d_prime), optional
        The user's own candidate pairs, searched instead of StatDP's.
    c, threshold, sensitivity : optional
        Passed to a variant (its c, threshold T and Δ; defaults 1, 1.0 and 1.0); ``sensitivity`` is also the
        neighbour distance.
    min_count : int, optional
        An event is considered only if it occurs at least this often on one input in the selection runs
        (default 10).

    Returns
    -------
    AuditResult
        The verdict, the p-value, the lower confidence bound on ε, the event and the pair it was tested on.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite number > 0, ``level`` is not in (0, 1), ``trials`` or
        ``selection_trials`` is not an integer in [100, 10⁶], ``min_count`` is not an integer ≥ 0, ``mechanism``
        is a string that is not a key of :data:`~dpcourse.svt.VARIANTS`, ``c`` is not an integer ≥ 1 (for a
        variant), the inputs are not neighbours (same shape, every answer within Δ), both ``pairs`` and
        answers are given, ``pairs`` is empty or only one of ``answers_d`` and ``answers_d_prime`` is given,
        ``rng`` is a negative seed, the mechanism does not return one row per trial, or no event occurs
        ``min_count`` times in the selection runs.
    TypeError
        If ``mechanism`` is neither a key, a :class:`~dpcourse.svt.Variant` nor a callable, it returns objects
        rather than numbers, a parameter is not a number of its kind, or ``rng`` is not a seed,
        ``SeedSequence`` or ``Generator``.
    """
    return _audit(
        mechanism,
        answers_d,
        answers_d_prime,
        epsilon=epsilon,
        trials=trials,
        selection_trials=selection_trials,
        rng=rng,
        level=level,
        pairs=pairs,
        c=c,
        threshold=threshold,
        sensitivity=sensitivity,
        min_count=min_count,
    )


def _audit(
    mechanism: Any,
    answers_d: ArrayLike | None,
    answers_d_prime: ArrayLike | None,
    *,
    epsilon: float,
    trials: int,
    selection_trials: int | None,
    rng: RngLike,
    level: float,
    pairs: Any,
    c: int,
    threshold: float,
    sensitivity: float,
    min_count: int,
) -> AuditResult:
    eps = check_epsilon(epsilon)
    level = check_probability(level, "level")
    delta_q = check_positive(sensitivity, "sensitivity")
    trials = check_integer(trials, "trials", minimum=100, maximum=10**6)
    min_count = check_integer(min_count, "min_count", minimum=0)
    selection = check_integer(
        trials // 4 if selection_trials is None else selection_trials, "selection_trials", minimum=100, maximum=10**6
    )
    run, name = _as_mechanism(mechanism, eps, c, threshold, delta_q)
    gen = as_generator(rng)
    candidates = _input_pairs(answers_d, answers_d_prime, pairs, delta_q)

    # Successive halving over the pairs: with more than _FINALISTS of them, every pair is first screened on a
    # quarter of the selection runs, and only the _FINALISTS best get the rest (the best by the learned region
    # and the others by the families' events, whose maxima are on another scale); the event is chosen on the
    # finalists' full selection runs. Each pair and event is still chosen on selection runs only, so the
    # test stays valid; the search costs about 7/16 of running every one of 16 pairs in full.
    screen = max(100, selection // 4) if len(candidates) > _FINALISTS else selection
    screened = []
    for pair in candidates:
        pair_name, d, d_prime = pair
        outputs = tuple(_as_outputs(run(x, trials=screen, rng=gen), screen) for x in (d, d_prime))
        score: tuple[float, float] | None = None
        if screen < selection:
            encoder = _Encoder(outputs[0], outputs[1], screening=True)
            families = _best_event(encoder, eps, min_count)
            learned = _best_event(encoder, eps, min_count, learned_region=True)
            assert families is not None  # the families always have an event (each value of the output)
            score = (families.score, -np.inf if learned is None else learned.score)
        screened.append((score, pair, outputs))
    if screen < selection:
        keep = _finalist_pairs([score for score, _, _ in screened if score is not None])  # none is, when screening
        screened = [screened[i] for i in keep]
    # Two finalists go to the test: the most significant event of the families, and the most significant
    # learned region (DP-Sniper's classifier, which gathers a leak spread thinly over many outputs that no
    # family shows). Their selection z's do not compare: the families' maximum over thousands of events is
    # inflated by chance, the learned region's, cross-fitted over a few dozen tails, much less. So both
    # are tested, each at level / 2 (Bonferroni), and the better one is reported.
    best: dict[str, tuple[_Candidate, _Encoder, tuple[str, np.ndarray, np.ndarray]]] = {}
    for _, pair, (sel_d, sel_d_prime) in screened:
        pair_name, d, d_prime = pair
        if screen < selection:
            sel_d = np.vstack([sel_d, _as_outputs(run(d, trials=selection - screen, rng=gen), selection - screen)])
            sel_d_prime = np.vstack(
                [sel_d_prime, _as_outputs(run(d_prime, trials=selection - screen, rng=gen), selection - screen)]
            )
        encoder = _Encoder(sel_d, sel_d_prime)
        for kind, candidate in (
            ("families", _best_event(encoder, eps, min_count)),
            ("learned", _best_event(encoder, eps, min_count, learned_region=True)),
        ):
            if candidate is not None and (kind not in best or candidate.score > best[kind][0].score):
                best[kind] = (candidate, encoder, pair)
    finalists = [best["families"], *([best["learned"]] if "learned" in best else [])]
    test_codes, tested = {}, []
    for candidate, encoder, (pair_name, d, d_prime) in finalists:
        if pair_name not in test_codes:  # both finalists may come from one pair: its test runs serve both
            order = (d_prime, d) if candidate.reverse else (d, d_prime)  # drawn on the favoured input first
            test_codes[pair_name] = [encoder.codes(_as_outputs(run(x, trials=trials, rng=gen), trials)) for x in order]
            if candidate.reverse:
                test_codes[pair_name].reverse()  # kept as (D, D′)
        codes = test_codes[pair_name][::-1] if candidate.reverse else test_codes[pair_name]
        feature = encoder.features[candidate.feature]
        counts = [int(np.sum(candidate.members[feature.values(c)])) for c in codes]
        p_value = thinned_fisher_p_value(counts[0], counts[1], trials, eps)
        tested.append((p_value, counts, candidate, (pair_name, d, d_prime)))
    raw_p, (count_d, count_d_prime), candidate, (pair_name, d, d_prime) = min(tested, key=lambda item: item[0])
    if candidate.reverse:
        d, d_prime = d_prime, d
    low, high = proportion_interval(np.array([count_d, count_d_prime]), trials, confidence=1 - level / len(tested))
    return AuditResult(
        name,
        pair_name + (" (D and D′ swapped)" if candidate.reverse else ""),
        candidate.description,
        count_d / trials,
        (float(low[0]), float(high[0])),
        count_d_prime / trials,
        (float(low[1]), float(high[1])),
        count_d,
        count_d_prime,
        min(1.0, len(tested) * raw_p),
        eps,
        level,
        trials,
        selection,
        len(candidates),
        np.asarray(d, dtype=float),
        np.asarray(d_prime, dtype=float),
        len(tested),
    )


def scan(
    mechanism: Any,
    answers_d: ArrayLike | None = None,
    answers_d_prime: ArrayLike | None = None,
    *,
    epsilon: float,
    test_epsilons: ArrayLike | None = None,
    **kwargs: Any,
) -> ScanResult:
    """The p-value at each test ε, all from one audit's test runs (StatDP's p-value curve).

    The event is chosen once, at the claimed ``epsilon`` (which is also the ε a variant runs at),
    and the same test counts give every p-value, so the curve rises monotonically and crosses
    ``level`` at the lower confidence bound on ε. ``test_epsilons`` defaults to 40 values up to
    4ε. An audit already run gives its curve without new runs: :meth:`AuditResult.scan`.

    Parameters
    ----------
    mechanism : str, Variant or callable
        As :func:`audit`.
    answers_d, answers_d_prime : array_like, optional
        As :func:`audit`.
    epsilon : float
        The claimed ε, > 0.
    test_epsilons : array_like or None, optional
        The test ε's, each ≥ 0; None (default) for 40 values evenly spaced up to 4ε.
    **kwargs
        The other keywords of :func:`audit` (``trials``, ``rng``, ``level``, ``pairs``, …).

    Returns
    -------
    ScanResult
        The p-value curve, with the audit it comes from as ``result``.

    Raises
    ------
    ValueError
        As :func:`audit`, and if ``test_epsilons`` is not a non-empty 1-D array of finite numbers ≥ 0.
    TypeError
        As :func:`audit`, and if ``test_epsilons`` is not numeric or a keyword is not one of :func:`audit`'s.
    """
    return audit(mechanism, answers_d, answers_d_prime, epsilon=epsilon, **kwargs).scan(test_epsilons)


def pattern_frequency(outputs: ArrayLike, pattern: Sequence[PatternEntry]) -> float:
    """The fraction of runs (rows of a variant's ``(trials, m)`` outputs) that match ``pattern``.

    The empirical counterpart of :func:`dpcourse.svt.variant_pattern_probability`, with the
    same pattern codes.

    Parameters
    ----------
    outputs : array_like, shape (trials, m)
        The runs' output codes (−∞ for ⊥, +∞ for ⊤, NaN for not answered, or a released number).
    pattern : sequence, length m
        One entry per query: −∞ (⊥), +∞ (⊤), NaN (not answered) or ``(lo, hi)``, a released number in
        [lo, hi].

    Returns
    -------
    float
        The fraction of rows that match, in [0, 1].

    Raises
    ------
    ValueError
        If ``outputs`` is not a non-empty 2-D array, ``pattern`` does not have m entries, or one of its entries
        is neither ±∞, NaN nor a pair ``(lo, hi)`` with lo < hi.
    TypeError
        If ``outputs`` is not numeric.
    """
    out = check_array(outputs, "outputs", ndim=2, finite=False)  # ±inf and NaN are output codes
    kinds = _pattern_items(pattern, out.shape[1])
    match = np.ones(out.shape[0], dtype=bool)
    for i, kind in enumerate(kinds):
        column = out[:, i]
        if kind[0] == "bottom":
            match &= np.isneginf(column)
        elif kind[0] == "top":
            match &= np.isposinf(column)
        elif kind[0] == "halted":
            match &= np.isnan(column)
        else:
            match &= np.isfinite(column) & (column >= kind[1]) & (column <= kind[2])
    return float(match.mean())
