"""Checks for the exercises of notebook 02 (randomized response vs Laplace vs Gaussian)."""

from __future__ import annotations

import numpy as np

from ..bounds import laplace_variance
from ..mechanisms import gaussian_sigma, rr_debias
from ._core import CheckFailed, expect_callable, expect_close, passed

__all__ = ["better_mechanism", "debias", "sensitivities"]


def debias(student_fn) -> None:
    """Exercise ``debias``: ``student_fn(y, epsilon)`` returns the unbiased estimate x̂ of a bit from a report y."""
    ex = "debias"
    fn = expect_callable(ex, student_fn, "your debiasing function")
    for epsilon in (0.1, 0.5, 1.0, 3.0):
        for y in (0, 1):
            try:
                got = fn(y, epsilon)
            except NotImplementedError:
                raise CheckFailed(ex, "the function still raises NotImplementedError") from None
            expect_close(ex, got, rr_debias([y], epsilon=epsilon)[0], what=f"x̂ for report y = {y} at ε = {epsilon}",
                         rtol=1e-9, hint="x̂ = ½ + (y − ½)/(2p − 1) with p = e^ε/(1 + e^ε); check that E[x̂] = x "
                                         "for both x = 0 and x = 1")
    passed(ex, "unbiased at every ε tried")


def sensitivities(l1, l2, *, num_queries: int = 50, n: int = 1000) -> None:
    """Exercise ``sensitivities``: Δ₁ and Δ₂ of K normalised counting queries (a person may be in all K)."""
    ex = "sensitivities"
    expect_close(ex, l1, num_queries / n, what="the L1 sensitivity", rtol=1e-9,
                 hint="one person can change every one of the K answers by 1/n")
    expect_close(ex, l2, np.sqrt(num_queries) / n, what="the L2 sensitivity", rtol=1e-9,
                 hint="the same change vector, measured in the 2-norm: √(K·(1/n)²)")
    passed(ex, f"Δ₁ = K/n = {num_queries / n:g}, Δ₂ = √K/n = {np.sqrt(num_queries) / n:.4g}")


def better_mechanism(choice, laplace_mse, gaussian_mse, *, n: int = 5000, num_queries: int = 200,
                     epsilon: float = 0.5, delta: float = 1e-6) -> None:
    """Exercise ``better-mechanism``: per-query MSE of Laplace and (analytic) Gaussian, and the winner."""
    ex = "better-mechanism"
    k = num_queries
    want_laplace = laplace_variance(sensitivity=k / n, epsilon=epsilon)
    want_gaussian = gaussian_sigma(l2_sensitivity=np.sqrt(k) / n, epsilon=epsilon, delta=delta) ** 2
    expect_close(ex, laplace_mse, want_laplace, what="Laplace's mean squared error per query", rtol=1e-6,
                 hint="Lap(b) has variance 2b², and b = Δ₁/ε with Δ₁ = K/n")
    expect_close(ex, gaussian_mse, want_gaussian, what="the Gaussian mechanism's mean squared error per query",
                 rtol=1e-6, hint="σ² with σ = gaussian_sigma(l2_sensitivity=√K/n, epsilon=ε, delta=δ)")
    winner = "gaussian" if want_gaussian < want_laplace else "laplace"
    if choice != winner:
        raise CheckFailed(ex, f"your errors are right, but you chose {choice!r}",
                          "the better mechanism is the one with the smaller error; answer 'laplace' or 'gaussian'")
    passed(ex, f"{winner} wins by a factor {max(want_laplace, want_gaussian) / min(want_laplace, want_gaussian):.1f}")
