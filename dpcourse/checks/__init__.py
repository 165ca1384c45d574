"""Check functions for the exercises, one module per notebook topic.

A check cell imports the module of its notebook and calls one function with the
student's answer::

    from dpcourse.checks import laplace as check
    check.tail_level(my_tail_level)

A right answer prints ``✓ <exercise>: correct``; a wrong one raises
:class:`CheckFailed` (an ``AssertionError``) whose message names the exercise and gives a hint.
"""

from ._core import CheckFailed

__all__ = ["CheckFailed"]
