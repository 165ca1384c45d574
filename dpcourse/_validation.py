"""Parameter checks shared by every module of the package.

Each checker takes the value and the *name the caller uses for it*, returns the value in
canonical form (a ``float``, an ``int``, a NumPy array, a ``Generator``) and raises
``TypeError`` for a value of the wrong kind or ``ValueError`` for one outside its range.
The message always names the parameter and the allowed range, so a student who passes
``epsilon=0`` reads ``epsilon must be a finite number > 0; got 0``. Nothing is clipped.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

#: What every ``rng`` parameter accepts (see :func:`as_generator`).
RngLike: TypeAlias = np.random.Generator | np.random.SeedSequence | int | None

__all__ = [
    "ArrayLike",
    "RngLike",
    "as_generator",
    "check_answers_and_threshold",
    "check_array",
    "check_binary",
    "check_choice",
    "check_epsilon",
    "check_histogram",
    "check_integer",
    "check_neighbouring_answers",
    "check_nonnegative",
    "check_positive",
    "check_probability",
    "check_size",
    "check_trials",
    "check_unit_interval_array",
    "sample_shape",
]


def _real_scalar(value: Any, name: str) -> float:
    kind = type(value)
    if kind is float or kind is int or kind is np.float64:  # the common case, without the ABC checks below
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.number):
            return float(value)
        raise TypeError(f"{name} must be a real number; got {type(value).__name__} {value!r}")
    return float(value)


def check_positive(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float, requiring ``0 < value`` (and finite unless ``allow_inf``)."""
    x = _real_scalar(value, name)
    upper = "" if allow_inf else "finite "
    if np.isnan(x) or x <= 0 or (np.isinf(x) and not allow_inf):
        raise ValueError(f"{name} must be a {upper}number > 0; got {value!r}")
    return x


def check_nonnegative(value: Any, name: str) -> float:
    """Return ``value`` as a float, requiring a finite ``value >= 0``."""
    x = _real_scalar(value, name)
    if not np.isfinite(x) or x < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    return x


def check_epsilon(value: Any, name: str = "epsilon", *, allow_inf: bool = False) -> float:
    """A privacy parameter ε: a finite number > 0 (``allow_inf`` admits ε = ∞, no privacy)."""
    return check_positive(value, name, allow_inf=allow_inf)


def check_probability(value: Any, name: str) -> float:
    """A probability such as δ or β: a number in the open interval (0, 1)."""
    x = _real_scalar(value, name)
    if np.isnan(x) or not 0 < x < 1:
        raise ValueError(f"{name} must be a number in the open interval (0, 1); got {value!r}")
    return x


def check_integer(value: Any, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` within ``[minimum, maximum]`` (either end optional)."""
    if type(value) is int:  # the common case, without the ABC checks below
        pass
    elif isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.integer):
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer; got {type(value).__name__} {value!r}")
    k = int(value)
    if (minimum is not None and k < minimum) or (maximum is not None and k > maximum):
        low = "-inf" if minimum is None else str(minimum)
        high = "inf" if maximum is None else str(maximum)
        raise ValueError(f"{name} must be an integer in [{low}, {high}]; got {value!r}")
    return k


def check_trials(trials: int | None) -> int | None:
    """``None`` (one draw) or a number of independent trials >= 1."""
    if trials is None:
        return None
    return check_integer(trials, "trials", minimum=1)


def check_choice(value: Any, name: str, options: Sequence[str]) -> str:
    """One of a fixed set of string options."""
    if value not in options:
        allowed = ", ".join(repr(o) for o in options)
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def check_array(
    value: Any,
    name: str,
    *,
    ndim: int | tuple[int, ...] | None = None,
    shape: tuple[int | None, ...] | None = None,
    min_size: int = 1,
    finite: bool = True,
    dtype: DTypeLike = float,
) -> np.ndarray:
    """Convert ``value`` to an array and check its dimension, shape and entries.

    ``shape`` may contain ``None`` for a free axis, e.g. ``(None, d)``.
    """
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an array of numbers; got {type(value).__name__}") from err
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise ValueError(f"{name} must be a {want}-dimensional array; got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape, strict=True)):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}; got {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} entries; got {arr.size}")
    if finite and arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers (no NaN or inf)")
    return arr


def check_answers_and_threshold(answers: ArrayLike, threshold: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Query answers (1-D) and their threshold: one number, or one per query; the threshold is
    returned broadcast to the answers' shape."""
    q = check_array(answers, "answers", ndim=1)
    t = check_array(threshold, "threshold", ndim=(0, 1))
    if t.ndim == 1 and t.shape != q.shape:
        raise ValueError(
            f"threshold must be one number or one per query, so threshold must have shape () or "
            f"({q.size},); got shape {t.shape}"
        )
    return q, np.broadcast_to(t, q.shape).astype(float)


def check_neighbouring_answers(
    answers_d: ArrayLike, answers_d_prime: ArrayLike, sensitivity: float
) -> tuple[np.ndarray, np.ndarray]:
    """Answers of the same queries on neighbours D and D′: same shape, |qᵢ(D) − qᵢ(D′)| ≤ Δ for every i."""
    a = check_array(answers_d, "answers_d", ndim=1)
    b = check_array(answers_d_prime, "answers_d_prime", shape=a.shape)
    if np.max(np.abs(a - b)) > sensitivity * (1 + 1e-12):
        raise ValueError(
            f"answers_d and answers_d_prime must differ by at most sensitivity = {sensitivity} "
            f"in every query; they differ by {np.max(np.abs(a - b)):g}"
        )
    return a, b


def check_binary(value: Any, name: str = "bits") -> np.ndarray:
    """An array whose entries are all 0 or 1 (booleans accepted); returned as ``int8``."""
    if isinstance(value, np.ndarray) and value.size and (value.dtype == bool or np.issubdtype(value.dtype, np.integer)):
        arr = value  # integers or booleans already (e.g. reports): checked as they are, without a float copy
    else:
        arr = check_array(value, name, dtype=float)
    if arr.dtype != bool and not np.all((arr == 0) | (arr == 1)):
        bad = float(arr[(arr != 0) & (arr != 1)].ravel()[0])
        raise ValueError(f"{name} must contain only 0 and 1; found {bad:g}")
    return arr.astype(np.int8)


def check_positive_array(value: Any, name: str, **kwargs: Any) -> np.ndarray:
    """An array with every entry > 0 (a scale, a price, a value whose logarithm is taken)."""
    arr = check_array(value, name, **kwargs)
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0 everywhere; found min {arr.min():g}")
    return arr


def check_unit_interval_array(value: Any, name: str, **kwargs: Any) -> np.ndarray:
    """An array with every entry in the closed interval [0, 1] (e.g. a linear query)."""
    arr = check_array(value, name, **kwargs)
    if np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"{name} must have every entry in [0, 1]; found min {arr.min():g}, max {arr.max():g}")
    return arr


def as_generator(rng: RngLike) -> np.random.Generator:
    """A NumPy ``Generator`` from ``None`` (fresh entropy), a seed, a ``SeedSequence`` or a ``Generator``.

    Every function that draws noise passes its ``rng`` argument through here, so a notebook
    can write ``rng=2026`` and get the same draws on every run.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng must be a seed >= 0, a SeedSequence or a numpy Generator; got {rng!r}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be None, a seed (int >= 0), a SeedSequence or a numpy Generator; got {type(rng).__name__}"
    )


def sample_shape(trials: int | None, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of a draw: ``shape`` for one trial, ``(trials, *shape)`` for many."""
    return tuple(shape) if trials is None else (trials, *shape)


# --- Notebook 06: Private Multiplicative Weights ---
def check_histogram(value: Any, name: str = "histogram", *, min_cells: int = 1) -> np.ndarray:
    """A histogram x ∈ ℝ≥0^|𝒳|: a 1-D array of finite counts, none negative, with a positive total n."""
    arr = check_array(value, name, ndim=1, min_size=min_cells)
    if np.any(arr < 0):
        raise ValueError(f"{name} must have every count >= 0; found {arr.min():g}")
    if not arr.sum() > 0:
        raise ValueError(f"{name} must have a positive total n = Σ x > 0; got n = {arr.sum():g}")
    return arr


#: Largest allocation a function may make before it refuses (about 1 GiB): Binder gives a
#: kernel 2 GB, and a NumPy temporary of the same size often follows the first array.
MAX_BYTES = 2**30


def check_size(nbytes: int, name: str, *, limit: int = MAX_BYTES) -> int:
    """Refuse, before allocating, work that would need more than ``limit`` bytes (about 1 GiB).

    ``name`` names the parameter(s) that set the size, e.g. ``"trials × max_k"``, so the
    student knows what to make smaller.
    """
    nbytes = int(nbytes)
    if nbytes > limit:
        raise ValueError(
            f"{name} is too large: this would allocate about {nbytes / 2**30:.3g} GiB, more than the "
            f"{limit / 2**30:.3g} GiB a course kernel can spare; make {name} smaller"
        )
    return nbytes


#: Work that keeps only a small result per row of a large array (a maximum, a mean, int8 reports) goes
#: through blocks of rows of about this many entries, instead of (rows × k) float temporaries.
BLOCK_ENTRIES = 1 << 18


def row_blocks(num_rows: int, row_entries: int) -> list[slice]:
    """Consecutive slices covering ``num_rows`` rows, each about :data:`BLOCK_ENTRIES` entries (at least one row)."""
    step = max(1, BLOCK_ENTRIES // max(1, row_entries))
    return [slice(start, min(start + step, num_rows)) for start in range(0, num_rows, step)]
