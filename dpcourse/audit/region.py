"""The learned region, as DP-Sniper learns one (Bichsel et al., S&P 2021): a penalised logistic regression
that tells D's outputs from D′'s, whose score's tails are candidate events.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _row_scores(table: Sequence[np.ndarray] | np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Σⱼ table[j, codes[:, j]] for each row, a column at a time (no (n, k) temporary)."""
    score = np.zeros(codes.shape[0])
    for j in range(codes.shape[1]):
        score += table[j][codes[:, j]]
    return score


_LEVELS = np.unique(np.r_[np.geomspace(1e-2, 0.5, 16), 1 - np.geomspace(1e-2, 0.5, 16)])


_RIDGE = 1.0  # prior precision of every weight (in runs): a code seen a handful of times stays near 0


_FUSION = 1000.0  # precision of the difference of adjacent number bins' weights: neighbouring values act alike


_FIT_PATTERNS = 40_000  # more distinct outputs than this: fit on a random 40,000 of them


def _bin_term(col: Any) -> np.ndarray:  # col: an encoding._ColumnCoder (not imported: encoding builds on this module)
    """By code of one column: its number bin's index scaled to [−1/2, 1/2], and 0 for ⊥, ⊤, halted and atoms."""
    term = np.zeros(col.size)
    if col.edges is not None:
        first = 3 + col.atoms.size
        term[first:] = np.arange(col.size - first) / (col.size - first) - 0.5
    return term


class _LogisticScore:
    """A linear score of the output codes, fitted by penalised logistic regression of D against D′.

    DP-Sniper (Bichsel et al. 2021) trains a classifier to tell M(D) from M(D′) and tests the runs it
    is most confident about; a threshold on the classifier's log-odds approximates the likelihood-ratio
    event that is most powerful against the claim. Here the features are one indicator per column
    and code (⊥, ⊤, halted, each atom, each number bin) and each numeric column's bin index, so the
    score is Σⱼ wⱼ(codeⱼ) + βⱼ·binⱼ. Unlike the naive-Bayes score it is fitted jointly, so positions
    that move together (an SVT's answers before and after its ⊤) are not counted twice. Runs are
    aggregated by distinct output first, and the weights are found by L-BFGS under a ridge prior
    (:data:`_RIDGE`) and a fused prior that ties adjacent number bins (:data:`_FUSION`); both are
    in units of runs, so they matter only where the data are thin.
    """

    def __init__(self, columns: Any, rows: np.ndarray, x: np.ndarray, y: np.ndarray, start: np.ndarray | None = None):
        from scipy import optimize, special

        sizes = np.array([col.size for col in columns])
        offsets = np.r_[0, np.cumsum(sizes)[:-1]]
        bin_terms = [_bin_term(col) for col in columns]
        seen = np.flatnonzero(x + y)
        if seen.size > _FIT_PATTERNS:  # mostly numbers: a random subset of the distinct outputs, whatever their runs
            seen = np.sort(np.random.default_rng(0).choice(seen, _FIT_PATTERNS, replace=False))
        rows, x, y = rows[seen], x[seen], y[seen]
        index = rows + offsets
        ordinal = np.column_stack([term[rows[:, j]] for j, term in enumerate(bin_terms)])
        n_weights, k = int(sizes.sum()), rows.shape[1]
        # adjacent number bins, whose weights the fused prior ties: (low, low + 1) within each numeric column
        low = np.concatenate(
            [np.zeros(0, np.intp)]
            + [
                o + np.arange(3 + col.atoms.size, col.size - 1)
                for o, col in zip(offsets, columns, strict=True)
                if col.edges is not None
            ]
        ).astype(np.intp)

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            w, beta, bias = theta[:n_weights], theta[n_weights:-1], theta[-1]
            s = w[index].sum(axis=1) + ordinal @ beta + bias
            jump = w[low + 1] - w[low]
            value = x @ np.logaddexp(0, -s) + y @ np.logaddexp(0, s)
            value += 0.5 * _RIDGE * (w @ w + beta @ beta) + 0.5 * _FUSION * (jump @ jump)
            r = y * special.expit(s) - x * special.expit(-s)  # d loss / d score of each distinct output
            grad_w = np.bincount(index.ravel(), np.repeat(r, k), minlength=n_weights) + _RIDGE * w
            grad_w += _FUSION * (
                np.bincount(low, -jump, minlength=n_weights) + np.bincount(low + 1, jump, minlength=n_weights)
            )
            return value, np.r_[grad_w, ordinal.T @ r + _RIDGE * beta, r.sum()]

        # the score only ranks outputs: a relative tolerance of 1e-6 on the loss is ample
        theta = optimize.minimize(
            loss,
            np.zeros(n_weights + k + 1) if start is None else start,
            jac=True,
            method="L-BFGS-B",
            options={"ftol": 1e-6, "maxiter": 300},
        ).x
        self.theta = theta
        # each column's contribution to the score, by code: its indicator's weight plus its bin's slope term
        self.tables = [
            theta[o : o + n] + theta[n_weights + j] * term
            for j, (o, n, term) in enumerate(zip(offsets, sizes, bin_terms, strict=True))
        ]

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        return _row_scores(self.tables, codes)
